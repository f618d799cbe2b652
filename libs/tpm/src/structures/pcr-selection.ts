import { algName, HASH_INFO, PCR_COUNT } from '../constants.js';
import { TpmParseError } from '../errors.js';
import { Reader, u16, u32, u8 } from '../marshal.js';

/** One TPMS_PCR_SELECTION: a bank (hash algorithm) and PCR indices in ascending order. */
export interface PcrSelection {
  readonly hashAlg: number;
  readonly pcrs: readonly number[];
}

/** Largest sizeofSelect we accept (PCRs 0..255). */
const MAX_SIZEOF_SELECT = 32;
/** Largest TPML_PCR_SELECTION count we accept (TPM HASH_COUNT is small). */
const MAX_BANKS = 16;

/** Marshals a TPML_PCR_SELECTION; sizeofSelect is 3 (24 PCRs) unless a PCR above 23 is selected. */
export function encodePcrSelection(selections: readonly PcrSelection[]): Buffer {
  const parts: Buffer[] = [u32(selections.length)];
  for (const s of selections) {
    const max = Math.max(PCR_COUNT - 1, ...s.pcrs);
    const size = Math.max(3, (max >> 3) + 1);
    const bitmap = Buffer.alloc(size);
    for (const p of s.pcrs) {
      if (!Number.isInteger(p) || p < 0 || p > 255) throw new RangeError(`invalid PCR index ${p}`);
      bitmap[p >> 3]! |= 1 << (p & 7);
    }
    parts.push(u16(s.hashAlg), u8(size), bitmap);
  }
  return Buffer.concat(parts);
}

/** Parses a TPML_PCR_SELECTION. */
export function readPcrSelection(r: Reader): PcrSelection[] {
  const count = r.u32('TPML_PCR_SELECTION.count');
  if (count > MAX_BANKS) throw new TpmParseError(r.what, `TPML_PCR_SELECTION count ${count} exceeds ${MAX_BANKS}`);
  const out: PcrSelection[] = [];
  for (let i = 0; i < count; i++) {
    const hashAlg = r.u16('TPMS_PCR_SELECTION.hash');
    const size = r.u8('TPMS_PCR_SELECTION.sizeofSelect');
    if (size > MAX_SIZEOF_SELECT) throw new TpmParseError(r.what, `sizeofSelect ${size} exceeds ${MAX_SIZEOF_SELECT}`);
    const bitmap = r.bytes(size, 'TPMS_PCR_SELECTION.pcrSelect');
    const pcrs: number[] = [];
    for (let p = 0; p < size * 8; p++) if (bitmap[p >> 3]! & (1 << (p & 7))) pcrs.push(p);
    out.push({ hashAlg, pcrs });
  }
  return out;
}

/** A TPML_DIGEST_VALUES entry (PCR_Extend input, PCR_Event output). */
export interface TaggedDigest {
  readonly hashAlg: number;
  readonly digest: Buffer;
}

/** Marshals TPML_DIGEST_VALUES; each digest must have its algorithm's size. */
export function encodeDigestValues(digests: readonly TaggedDigest[]): Buffer {
  const parts: Buffer[] = [u32(digests.length)];
  for (const d of digests) {
    const info = HASH_INFO.get(d.hashAlg);
    if (!info) throw new RangeError(`unsupported hash algorithm ${algName(d.hashAlg)}`);
    if (d.digest.length !== info.size) throw new RangeError(`${info.name} digest must be ${info.size} bytes, got ${d.digest.length}`);
    parts.push(u16(d.hashAlg), d.digest);
  }
  return Buffer.concat(parts);
}

/** Parses TPML_DIGEST_VALUES (digest sizes follow from the algorithm ids). */
export function readDigestValues(r: Reader): TaggedDigest[] {
  const count = r.u32('TPML_DIGEST_VALUES.count');
  if (count > MAX_BANKS) throw new TpmParseError(r.what, `TPML_DIGEST_VALUES count ${count} exceeds ${MAX_BANKS}`);
  const out: TaggedDigest[] = [];
  for (let i = 0; i < count; i++) {
    const hashAlg = r.u16('TPMT_HA.hashAlg');
    const info = HASH_INFO.get(hashAlg);
    if (!info) throw new TpmParseError(r.what, `unknown hash algorithm ${algName(hashAlg)} in TPMT_HA`);
    out.push({ hashAlg, digest: r.bytes(info.size, 'TPMT_HA.digest') });
  }
  return out;
}
