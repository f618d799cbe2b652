import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { algName, HASH_INFO, TPM_ALG, TPM_ECC_CURVE } from '../constants.js';
import { TpmError, TpmParseError } from '../errors.js';
import { Reader, tpm2b, u16, u32 } from '../marshal.js';

/** TPMA_OBJECT bits. */
export const TPMA_OBJECT = {
  fixedTPM: 1 << 1,
  stClear: 1 << 2,
  fixedParent: 1 << 4,
  sensitiveDataOrigin: 1 << 5,
  userWithAuth: 1 << 6,
  adminWithPolicy: 1 << 7,
  noDA: 1 << 10,
  encryptedDuplication: 1 << 11,
  restricted: 1 << 16,
  decrypt: 1 << 17,
  sign: 1 << 18,
} as const;

/** TPMT_SYM_DEF_OBJECT (algorithm NULL means none). */
export interface SymDef {
  readonly algorithm: number;
  readonly keyBits?: number;
  readonly mode?: number;
}

/** TPMT_*_SCHEME with a hash (scheme NULL means none). */
export interface Scheme {
  readonly scheme: number;
  readonly hashAlg?: number;
}

export interface RsaParameters {
  readonly symmetric: SymDef;
  readonly scheme: Scheme;
  readonly keyBits: number;
  /** 0 means the default exponent 65537. */
  readonly exponent: number;
}

export interface EccParameters {
  readonly symmetric: SymDef;
  readonly scheme: Scheme;
  readonly curveId: number;
  readonly kdf: Scheme;
}

/** TPMT_PUBLIC for RSA and ECC keys (the two types attestation keys use). */
export type TpmtPublic =
  | {
      readonly type: typeof TPM_ALG.RSA;
      readonly nameAlg: number;
      readonly objectAttributes: number;
      readonly authPolicy: Buffer;
      readonly rsa: RsaParameters;
      /** unique: the modulus. */
      readonly modulus: Buffer;
    }
  | {
      readonly type: typeof TPM_ALG.ECC;
      readonly nameAlg: number;
      readonly objectAttributes: number;
      readonly authPolicy: Buffer;
      readonly ecc: EccParameters;
      /** unique: the point. */
      readonly x: Buffer;
      readonly y: Buffer;
    };

function encodeSym(s: SymDef): Buffer {
  return s.algorithm === TPM_ALG.NULL ? u16(TPM_ALG.NULL) : Buffer.concat([u16(s.algorithm), u16(s.keyBits ?? 0), u16(s.mode ?? TPM_ALG.NULL)]);
}

function encodeScheme(s: Scheme): Buffer {
  return s.scheme === TPM_ALG.NULL ? u16(TPM_ALG.NULL) : Buffer.concat([u16(s.scheme), u16(s.hashAlg ?? TPM_ALG.NULL)]);
}

/** Marshals TPMT_PUBLIC (without the TPM2B size). */
export function encodePublic(p: TpmtPublic): Buffer {
  const head = [u16(p.type), u16(p.nameAlg), u32(p.objectAttributes), tpm2b(p.authPolicy)];
  if (p.type === TPM_ALG.RSA) {
    return Buffer.concat([...head, encodeSym(p.rsa.symmetric), encodeScheme(p.rsa.scheme), u16(p.rsa.keyBits), u32(p.rsa.exponent), tpm2b(p.modulus)]);
  }
  return Buffer.concat([...head, encodeSym(p.ecc.symmetric), encodeScheme(p.ecc.scheme), u16(p.ecc.curveId), encodeScheme(p.ecc.kdf), tpm2b(p.x), tpm2b(p.y)]);
}

function readSym(r: Reader): SymDef {
  const algorithm = r.u16('symmetric.algorithm');
  if (algorithm === TPM_ALG.NULL) return { algorithm };
  return { algorithm, keyBits: r.u16('symmetric.keyBits'), mode: r.u16('symmetric.mode') };
}

function readScheme(r: Reader, field: string): Scheme {
  const scheme = r.u16(`${field}.scheme`);
  if (scheme === TPM_ALG.NULL) return { scheme };
  // ECDAA carries a count after the hash; attestation keys never use it.
  if (scheme === TPM_ALG.ECDAA) throw new TpmParseError(r.what, 'ECDAA schemes are not supported');
  return { scheme, hashAlg: r.u16(`${field}.hashAlg`) };
}

/** Parses a TPMT_PUBLIC (RSA or ECC) from a reader. */
export function readPublic(r: Reader): TpmtPublic {
  const type = r.u16('TPMT_PUBLIC.type');
  const nameAlg = r.u16('TPMT_PUBLIC.nameAlg');
  const objectAttributes = r.u32('TPMT_PUBLIC.objectAttributes');
  const authPolicy = r.tpm2b('TPMT_PUBLIC.authPolicy', 64);
  if (type === TPM_ALG.RSA) {
    const symmetric = readSym(r);
    const scheme = readScheme(r, 'TPMS_RSA_PARMS.scheme');
    const keyBits = r.u16('TPMS_RSA_PARMS.keyBits');
    const exponent = r.u32('TPMS_RSA_PARMS.exponent');
    const modulus = r.tpm2b('TPM2B_PUBLIC_KEY_RSA', 512);
    return { type, nameAlg, objectAttributes, authPolicy, rsa: { symmetric, scheme, keyBits, exponent }, modulus };
  }
  if (type === TPM_ALG.ECC) {
    const symmetric = readSym(r);
    const scheme = readScheme(r, 'TPMS_ECC_PARMS.scheme');
    const curveId = r.u16('TPMS_ECC_PARMS.curveID');
    const kdf = readScheme(r, 'TPMS_ECC_PARMS.kdf');
    const x = r.tpm2b('TPMS_ECC_POINT.x', 128);
    const y = r.tpm2b('TPMS_ECC_POINT.y', 128);
    return { type, nameAlg, objectAttributes, authPolicy, ecc: { symmetric, scheme, curveId, kdf }, x, y };
  }
  throw new TpmParseError(r.what, `unsupported key type ${algName(type)}`, { type });
}

/** Parses the bytes of a TPMT_PUBLIC (the content of a TPM2B_PUBLIC); trailing bytes are an error. */
export function decodePublic(bytes: Uint8Array): TpmtPublic {
  const r = new Reader(bytes, 'TPMT_PUBLIC');
  const p = readPublic(r);
  r.end();
  return p;
}

/** The object's TPM name: nameAlg || H_nameAlg(TPMT_PUBLIC). */
export function publicName(p: TpmtPublic | Uint8Array): Buffer {
  const bytes = p instanceof Uint8Array ? Buffer.from(p) : encodePublic(p);
  const nameAlg = p instanceof Uint8Array ? decodePublic(p).nameAlg : p.nameAlg;
  const info = HASH_INFO.get(nameAlg);
  if (!info) throw new TpmError('TPM_UNSUPPORTED', `unsupported name algorithm ${algName(nameAlg)}`);
  return Buffer.concat([u16(nameAlg), createHash(info.name).update(bytes).digest()]);
}

const leftPad = (b: Buffer, size: number): Buffer => (b.length >= size ? b : Buffer.concat([Buffer.alloc(size - b.length), b]));

/** The node:crypto public key of a TPMT_PUBLIC (for signature verification and PEM export). */
export function publicKeyObject(p: TpmtPublic): KeyObject {
  try {
    if (p.type === TPM_ALG.RSA) {
      const e = p.rsa.exponent === 0 ? 65537 : p.rsa.exponent;
      const eBytes = u32(e);
      let i = 0;
      while (i < 3 && eBytes[i] === 0) i++;
      return createPublicKey({ key: { kty: 'RSA', n: p.modulus.toString('base64url'), e: eBytes.subarray(i).toString('base64url') }, format: 'jwk' });
    }
    const curve = TPM_ECC_CURVE.get(p.ecc.curveId);
    if (!curve) throw new TpmError('TPM_UNSUPPORTED', `unsupported ECC curve 0x${p.ecc.curveId.toString(16)}`);
    return createPublicKey({
      key: { kty: 'EC', crv: curve.jwk, x: leftPad(p.x, curve.size).toString('base64url'), y: leftPad(p.y, curve.size).toString('base64url') },
      format: 'jwk',
    });
  } catch (err) {
    if (err instanceof TpmError) throw err;
    throw new TpmParseError('TPMT_PUBLIC', `not a valid public key: ${(err as Error).message}`);
  }
}

/** Whether two TPMT_PUBLIC describe the same public key (RSA: N and E; ECC: curve and point). */
export function samePublicKey(a: TpmtPublic, b: TpmtPublic): boolean {
  if (a.type === TPM_ALG.RSA && b.type === TPM_ALG.RSA) {
    const ea = a.rsa.exponent || 65537;
    const eb = b.rsa.exponent || 65537;
    return ea === eb && stripZeros(a.modulus).equals(stripZeros(b.modulus));
  }
  if (a.type === TPM_ALG.ECC && b.type === TPM_ALG.ECC) {
    return a.ecc.curveId === b.ecc.curveId && stripZeros(a.x).equals(stripZeros(b.x)) && stripZeros(a.y).equals(stripZeros(b.y));
  }
  return false;
}

function stripZeros(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}
