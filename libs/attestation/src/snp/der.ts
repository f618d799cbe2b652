/**
 * The few DER values V[CL]EK certificate extensions carry (docs/protocol/sev-snp.md §5): one
 * TLV with a definite short or long length, INTEGER / IA5String / OCTET STRING. Bounds-checked;
 * anything else is an Error the caller turns into CERT_INVALID.
 */

const TAG = { INTEGER: 0x02, OCTET_STRING: 0x04, UTF8_STRING: 0x0c, IA5_STRING: 0x16 } as const;

/** Reads exactly one TLV spanning all of `der`; returns tag and contents. */
export function readTlv(der: Uint8Array): { tag: number; value: Buffer } {
  const b = Buffer.from(der);
  if (b.length < 2) throw new Error('DER value too short');
  const tag = b[0]!;
  let len = b[1]!;
  let off = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || b.length < 2 + n) throw new Error('unsupported DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[2 + i]!;
    if (len < 0x80) throw new Error('non-minimal DER length');
    off = 2 + n;
  }
  if (off + len !== b.length) throw new Error(`DER length ${len} does not match the ${b.length - off} bytes present`);
  return { tag, value: b.subarray(off) };
}

/** A non-negative DER INTEGER up to 2^31. */
export function readSmallInteger(der: Uint8Array): number {
  const { tag, value } = readTlv(der);
  if (tag !== TAG.INTEGER) throw new Error(`expected an INTEGER, got tag 0x${tag.toString(16)}`);
  if (value.length === 0 || value.length > 5) throw new Error(`INTEGER of ${value.length} bytes is out of range`);
  if (value[0]! & 0x80) throw new Error('negative INTEGER');
  if (value.length > 1 && value[0] === 0 && !(value[1]! & 0x80)) throw new Error('non-minimal INTEGER');
  let n = 0;
  for (const byte of value) n = n * 256 + byte;
  if (n > 0x7fffffff) throw new Error('INTEGER out of range');
  return n;
}

/** An OCTET STRING's contents. */
export function readOctetString(der: Uint8Array): Buffer {
  const { tag, value } = readTlv(der);
  if (tag !== TAG.OCTET_STRING) throw new Error(`expected an OCTET STRING, got tag 0x${tag.toString(16)}`);
  return Buffer.from(value);
}

/** An IA5String (or UTF8String) as text. */
export function readString(der: Uint8Array): string {
  const { tag, value } = readTlv(der);
  if (tag !== TAG.IA5_STRING && tag !== TAG.UTF8_STRING) throw new Error(`expected a string, got tag 0x${tag.toString(16)}`);
  return value.toString(tag === TAG.IA5_STRING ? 'latin1' : 'utf8');
}
