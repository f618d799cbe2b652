/**
 * What a DcapVerifier has already checked, keyed by content: parsed certificate chains whose
 * signatures lead to the root, signed collateral whose signature verified, CRLs whose issuer
 * signed them. Signatures do not depend on the verification time, so they are checked once per
 * distinct input; validity windows are checked again on every verification. Only successes are
 * kept, and at most `limit` entries (oldest dropped first).
 */
import { createHash, type X509Certificate } from 'node:crypto';
import { AttestationError } from '../errors.js';
import type { Signed } from './collateral.js';
import { parsePemChain } from './pck.js';
import { checkChainSignatures, checkCrlSignature, cn, parseCrl, verifyP256Raw, type Crl } from './pki.js';

/** Verified-once results of one trust root. */
export class VerificationMemo {
  readonly #entries = new Map<string, unknown>();

  constructor(
    private readonly root: X509Certificate,
    private readonly limit = 256,
  ) {}

  /** A PEM chain whose issuers and signatures lead to the root. */
  chain(pem: string, what: string): X509Certificate[] {
    return this.#remember(`chain\0${what}\0${pem}`, () => {
      const chain = parsePemChain(pem, what);
      checkChainSignatures(chain, this.root, what);
      return chain;
    });
  }

  /** A signed collateral document, parsed, signed by the first certificate of its verified issuer chain. */
  signed<T>(body: string, issuerChainPem: string, what: string, parse: (body: string) => Signed<T>): { value: T; chain: X509Certificate[] } {
    return this.#remember(`signed\0${what}\0${issuerChainPem}\0${body}`, () => {
      const doc = parse(body);
      const chain = this.chain(issuerChainPem, `${what} issuer chain`);
      if (!verifyP256Raw(chain[0]!.publicKey, Buffer.from(doc.signedText, 'utf8'), doc.signature)) {
        throw new AttestationError('COLLATERAL_SIGNATURE_INVALID', `${what}: signature does not verify with ${cn(chain[0]!)}`, { details: { collateral: what } });
      }
      return { value: doc.value, chain };
    });
  }

  /** A DER CRL, parsed and signed by `issuer`. */
  crl(der: Uint8Array, issuer: X509Certificate, what: string): Crl {
    const digest = createHash('sha256').update(der).digest('hex');
    return this.#remember(`crl\0${what}\0${issuer.fingerprint256}\0${digest}`, () => {
      const crl = parseCrl(der, what);
      checkCrlSignature(crl, issuer, what);
      return crl;
    });
  }

  #remember<T>(key: string, compute: () => T): T {
    if (this.#entries.has(key)) return this.#entries.get(key) as T;
    const value = compute();
    if (this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, value);
    return value;
  }
}
