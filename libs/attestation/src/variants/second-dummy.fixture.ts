/**
 * A test-only variant, to show that a variant is one module (docs/CONTRIBUTING.md "How to add an
 * attestation variant"; docs/adr/0035-variant-descriptor-table.md): this descriptor and the specs
 * that register it are all it takes for the CLI, the joinservice, the bootstrapper and the chart
 * schemas to offer it. Like `dummy` it has no security: its document is Go JSON of
 * `{"UserData": b64, "Nonce": b64, "Variant": "second-dummy"}`. Its validator names one outside
 * source (`ak-ca-issuers`, which it does not use), so the apps' source builders are exercised too.
 */
import { measurementsOnlyCodec } from '../config/shapes.js';
import { AttestationError } from '../errors.js';
import { goBytes, goBytesValue, goField, parseGoJsonObject } from '../go-json.js';
import type { Issuer, Validator } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { VariantId } from '../variant.js';
import type { VariantDescriptor } from './descriptor.js';

const VARIANT = new VariantId('second-dummy', '1.3.9900.99.1');

/** Issues `{"UserData","Nonce","Variant"}`. */
class SecondDummyIssuer implements Issuer {
  readonly variant = VARIANT;

  async issue(userData: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
    return Buffer.from(JSON.stringify({ UserData: goBytesValue(userData), Nonce: goBytesValue(nonce), Variant: VARIANT.name }));
  }
}

/** Accepts a document of this variant whose nonce matches. */
class SecondDummyValidator implements Validator {
  readonly variant = VARIANT;

  async validate(document: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
    const doc = parseGoJsonObject(document, 'second-dummy attestation document');
    if (goField(doc, 'Variant') !== VARIANT.name) throw new AttestationError('DOCUMENT_MALFORMED', 'not a second-dummy document');
    if (!goBytes(goField(doc, 'Nonce'), 'Nonce').equals(Buffer.from(nonce))) throw new AttestationError('NONCE_MISMATCH', 'invalid nonce');
    return goBytes(goField(doc, 'UserData'), 'UserData');
  }
}

/** The descriptor; register it with `registerVariant` (and remove it again with the function that returns). */
export const secondDummyVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'QEMU',
  offeredBy: { QEMU: 9 },
  platform: 'tpm',
  config: measurementsOnlyCodec(VARIANT.name, { optional: true }),
  defaultMeasurements: () => new Measurements(),
  issuer: () => new SecondDummyIssuer(),
  validator: () => new SecondDummyValidator(),
  sources: ['ak-ca-issuers'],
};
