import { measurementsOnlyCodec } from '../config/shapes.js';
import { AttestationError } from '../errors.js';
import { goBytes, goBytesValue, goField, parseGoJsonObject } from '../go-json.js';
import type { Issuer, Validator } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { VariantId } from '../variant.js';
import type { VariantDescriptor } from './descriptor.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('dummy', '1.3.9900.1.1');

/**
 * The reference's `dummy` variant (docs/protocol/attestation-variants.md): the "document" is Go JSON of
 * `{"UserData": b64, "Nonce": b64}`. No security at all; tests and local development only.
 */
export class DummyIssuer implements Issuer {
  readonly variant = VARIANT;

  async issue(userData: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
    return Buffer.from(JSON.stringify({ UserData: goBytesValue(userData), Nonce: goBytesValue(nonce) }));
  }
}

/** Accepts any dummy document whose nonce matches, returning its user data. */
export class DummyValidator implements Validator {
  readonly variant = VARIANT;

  async validate(document: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
    const doc = parseGoJsonObject(document, 'dummy attestation document');
    const docNonce = goBytes(goField(doc, 'Nonce'), 'Nonce');
    if (!docNonce.equals(Buffer.from(nonce))) {
      throw new AttestationError('NONCE_MISMATCH', `invalid nonce: expected ${docNonce.toString('hex')}, got ${Buffer.from(nonce).toString('hex')}`, {
        details: { expected: docNonce.toString('hex'), actual: Buffer.from(nonce).toString('hex') },
      });
    }
    return goBytes(goField(doc, 'UserData'), 'UserData');
  }
}

/** `dummy`: no security, no measurements, no outside sources; offered by no cloud but the Unknown provider. */
export const dummyVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'Unknown',
  offeredBy: { Unknown: 0 },
  platform: 'tpm',
  insecure: true,
  config: measurementsOnlyCodec(VARIANT.name, { optional: true }),
  defaultMeasurements: () => new Measurements(),
  issuer: () => new DummyIssuer(),
  validator: () => new DummyValidator(),
  sources: [],
};
