import { algName, TPM_ALG } from '../constants.js';
import { TpmParseError } from '../errors.js';
import { Reader, tpm2b, u16 } from '../marshal.js';

/** TPMT_SIGNATURE for the schemes attestation keys use. */
export type TpmtSignature =
  | { readonly sigAlg: typeof TPM_ALG.RSASSA | typeof TPM_ALG.RSAPSS; readonly hashAlg: number; readonly signature: Buffer }
  | { readonly sigAlg: typeof TPM_ALG.ECDSA; readonly hashAlg: number; readonly r: Buffer; readonly s: Buffer };

/** Parses a TPMT_SIGNATURE from a reader. */
export function readSignature(r: Reader): TpmtSignature {
  const sigAlg = r.u16('TPMT_SIGNATURE.sigAlg');
  if (sigAlg === TPM_ALG.RSASSA || sigAlg === TPM_ALG.RSAPSS) {
    const hashAlg = r.u16('TPMS_SIGNATURE_RSA.hash');
    return { sigAlg, hashAlg, signature: r.tpm2b('TPMS_SIGNATURE_RSA.sig', 512) };
  }
  if (sigAlg === TPM_ALG.ECDSA) {
    const hashAlg = r.u16('TPMS_SIGNATURE_ECC.hash');
    return { sigAlg, hashAlg, r: r.tpm2b('TPMS_SIGNATURE_ECC.signatureR', 128), s: r.tpm2b('TPMS_SIGNATURE_ECC.signatureS', 128) };
  }
  throw new TpmParseError(r.what, `unsupported signature algorithm ${algName(sigAlg)}`, { sigAlg });
}

/** Parses raw TPMT_SIGNATURE bytes (e.g. `raw_sig` of an attestation document). */
export function decodeSignature(bytes: Uint8Array): TpmtSignature {
  const r = new Reader(bytes, 'TPMT_SIGNATURE');
  const sig = readSignature(r);
  r.end();
  return sig;
}

/** Marshals a TPMT_SIGNATURE. */
export function encodeSignature(sig: TpmtSignature): Buffer {
  if (sig.sigAlg === TPM_ALG.ECDSA) return Buffer.concat([u16(sig.sigAlg), u16(sig.hashAlg), tpm2b(sig.r), tpm2b(sig.s)]);
  return Buffer.concat([u16(sig.sigAlg), u16(sig.hashAlg), tpm2b(sig.signature)]);
}
