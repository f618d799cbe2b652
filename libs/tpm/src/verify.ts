import { constants, createHash, timingSafeEqual, verify as cryptoVerify } from 'node:crypto';
import { algName, HASH_INFO, TPM_ALG, TPM_ECC_CURVE } from './constants.js';
import { QuoteVerificationError, TpmError, TpmParseError } from './errors.js';
import { decodeQuoteAttest, type QuoteAttest } from './structures/attest.js';
import { decodePublic, publicKeyObject, type TpmtPublic } from './structures/public.js';
import { decodeSignature, type TpmtSignature } from './structures/signature.js';

/** Inputs of verifyQuote; all wire formats are the TPM's own (as carried in attestation documents). */
export interface QuoteToVerify {
  /** The attestation key: TPMT_PUBLIC bytes or parsed. The caller decides whether it trusts it. */
  readonly akPublic: Uint8Array | TpmtPublic;
  /** TPMS_ATTEST bytes exactly as signed. */
  readonly attest: Uint8Array;
  /** TPMT_SIGNATURE bytes or parsed. */
  readonly signature: Uint8Array | TpmtSignature;
  /** The expected qualifying data (extraData), compared in constant time. */
  readonly nonce: Uint8Array;
  /** The claimed PCR values of the quoted bank; the quote must select exactly these indices. */
  readonly pcrs: ReadonlyMap<number, Uint8Array>;
  /** The bank of `pcrs` (default SHA-256). */
  readonly pcrHashAlg?: number;
}

const SIGNATURE_HASHES = new Set<number>([TPM_ALG.SHA256, TPM_ALG.SHA384, TPM_ALG.SHA512]);

/**
 * Verifies a TPM2_Quote without a TPM: the structure, the signature over TPMS_ATTEST with the AK
 * (node:crypto), extraData == nonce, the PCR selection, and pcrDigest == H_sig(PCR values in
 * ascending order). Throws QuoteVerificationError with a precise code; returns the parsed attest.
 */
export function verifyQuote(q: QuoteToVerify): QuoteAttest {
  const bank = q.pcrHashAlg ?? TPM_ALG.SHA256;
  const { attest, signature, ak } = parseInputs(q);
  checkSignature(ak, signature, q.attest);
  checkNonce(attest, q.nonce);
  checkSelection(attest, bank, q.pcrs);
  checkPcrDigest(attest, signature.hashAlg, bank, q.pcrs);
  return attest;
}

/** Normalises the wire inputs; any malformed structure is QUOTE_MALFORMED. */
function parseInputs(q: QuoteToVerify): { attest: QuoteAttest; signature: TpmtSignature; ak: TpmtPublic } {
  try {
    const ak = q.akPublic instanceof Uint8Array ? decodePublic(q.akPublic) : q.akPublic;
    const signature = q.signature instanceof Uint8Array ? decodeSignature(q.signature) : q.signature;
    return { attest: decodeQuoteAttest(q.attest), signature, ak };
  } catch (err) {
    if (err instanceof TpmParseError || (err instanceof TpmError && err.code === 'TPM_UNSUPPORTED')) {
      throw new QuoteVerificationError('QUOTE_MALFORMED', `malformed quote: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

/** Crypto: the AK signed exactly these TPMS_ATTEST bytes. */
function checkSignature(ak: TpmtPublic, sig: TpmtSignature, attest: Uint8Array): void {
  const fail = (reason: string): never => {
    throw new QuoteVerificationError('QUOTE_SIGNATURE_INVALID', `quote signature invalid: ${reason}`, {
      details: { sigAlg: algName(sig.sigAlg), hashAlg: algName(sig.hashAlg) },
    });
  };
  if (!SIGNATURE_HASHES.has(sig.hashAlg)) fail(`signature hash ${algName(sig.hashAlg)} not allowed`);
  const hash = HASH_INFO.get(sig.hashAlg)!.name;
  let key;
  try {
    key = publicKeyObject(ak);
  } catch (err) {
    throw new QuoteVerificationError('QUOTE_MALFORMED', `attestation key unusable: ${(err as Error).message}`, { cause: err });
  }
  let ok = false;
  try {
    if (sig.sigAlg === TPM_ALG.ECDSA) {
      if (ak.type !== TPM_ALG.ECC) fail('ECDSA signature but the AK is not an ECC key');
      const size = TPM_ECC_CURVE.get((ak as Extract<TpmtPublic, { type: 0x0023 }>).ecc.curveId)!.size;
      if (sig.r.length > size || sig.s.length > size) fail('ECDSA r or s longer than the curve order');
      const pad = (b: Buffer) => Buffer.concat([Buffer.alloc(size - b.length), b]);
      ok = cryptoVerify(hash, attest, { key, dsaEncoding: 'ieee-p1363' }, Buffer.concat([pad(sig.r), pad(sig.s)]));
    } else {
      if (ak.type !== TPM_ALG.RSA) fail('RSA signature but the AK is not an RSA key');
      const padding = sig.sigAlg === TPM_ALG.RSAPSS ? constants.RSA_PKCS1_PSS_PADDING : constants.RSA_PKCS1_PADDING;
      ok = cryptoVerify(hash, attest, { key, padding, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, sig.signature);
    }
  } catch (err) {
    if (err instanceof QuoteVerificationError) throw err;
    fail((err as Error).message);
  }
  if (!ok) fail('signature does not verify with the attestation key');
}

/** Policy: the quote is fresh (extraData equals the expected nonce). */
function checkNonce(attest: QuoteAttest, nonce: Uint8Array): void {
  const a = attest.extraData;
  if (a.length !== nonce.length || !timingSafeEqual(a, nonce)) {
    throw new QuoteVerificationError('QUOTE_NONCE_MISMATCH', 'quote extraData does not match the expected nonce', {
      details: { expectedLength: nonce.length, actualLength: a.length },
    });
  }
}

/** Policy: the quote selects exactly the claimed PCRs of the claimed bank. */
function checkSelection(attest: QuoteAttest, bank: number, pcrs: ReadonlyMap<number, Uint8Array>): void {
  const claimed = [...pcrs.keys()].sort((a, b) => a - b);
  const banks = attest.pcrSelect.filter((s) => s.pcrs.length > 0);
  const sel = banks[0];
  const same = banks.length === 1 && sel!.hashAlg === bank && sel!.pcrs.length === claimed.length && sel!.pcrs.every((p, i) => p === claimed[i]);
  if (!same) {
    throw new QuoteVerificationError('QUOTE_PCR_SELECTION_MISMATCH', `quote selects ${describeSelection(banks)}, the claimed values are ${algName(bank)}:${claimed.join(',')}`, {
      details: { quoted: banks.map((b) => ({ hashAlg: b.hashAlg, pcrs: b.pcrs })), claimed },
    });
  }
}

/** Crypto binding: pcrDigest covers exactly the claimed values. */
function checkPcrDigest(attest: QuoteAttest, sigHash: number, bank: number, pcrs: ReadonlyMap<number, Uint8Array>): void {
  const size = HASH_INFO.get(bank)?.size;
  const h = createHash(HASH_INFO.get(sigHash)!.name);
  for (const p of [...pcrs.keys()].sort((a, b) => a - b)) {
    const v = pcrs.get(p)!;
    if (v.length !== size) {
      throw new QuoteVerificationError('QUOTE_PCR_DIGEST_MISMATCH', `PCR ${p} value is ${v.length} bytes, bank ${algName(bank)} needs ${size}`, { details: { pcr: p } });
    }
    h.update(v);
  }
  if (!h.digest().equals(attest.pcrDigest)) {
    throw new QuoteVerificationError('QUOTE_PCR_DIGEST_MISMATCH', 'quote pcrDigest does not match the claimed PCR values', {
      details: { pcrDigest: attest.pcrDigest.toString('hex') },
    });
  }
}

function describeSelection(banks: QuoteAttest['pcrSelect']): string {
  return banks.length === 0 ? 'no PCRs' : banks.map((b) => `${algName(b.hashAlg)}:${b.pcrs.join(',')}`).join(' ');
}
