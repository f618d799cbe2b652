import { AttestationError } from './errors.js';
import { goBytes, goBytesValue, goField, parseGoJsonObject } from './go-json.js';
import type { Issuer, Validator } from './interfaces.js';
import { Variant } from './variant.js';

/**
 * The reference's `dummy` variant (docs/protocol/attestation-variants.md): the "document" is Go JSON of
 * `{"UserData": b64, "Nonce": b64}`. No security at all; tests and local development only.
 */
export class DummyIssuer implements Issuer {
  readonly variant = Variant.fromString('dummy');

  async issue(userData: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
    return Buffer.from(JSON.stringify({ UserData: goBytesValue(userData), Nonce: goBytesValue(nonce) }));
  }
}

/** Accepts any dummy document whose nonce matches, returning its user data. */
export class DummyValidator implements Validator {
  readonly variant = Variant.fromString('dummy');

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
