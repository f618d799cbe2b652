import { TpmParseError } from './errors.js';

/**
 * Big-endian TPM marshalling. `Reader` checks every length against the remaining bytes and throws
 * TpmParseError (never RangeError) so malicious or truncated input cannot crash a caller.
 */

export const u8 = (v: number): Buffer => Buffer.from([v & 0xff]);
export const u16 = (v: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v & 0xffff);
  return b;
};
export const u32 = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b;
};
/** TPM2B: u16 size followed by the bytes. */
export const tpm2b = (d: Uint8Array = Buffer.alloc(0)): Buffer => {
  if (d.length > 0xffff) throw new RangeError(`TPM2B too large: ${d.length} bytes`);
  return Buffer.concat([u16(d.length), d]);
};

/** Bounds-checked cursor over TPM bytes. */
export class Reader {
  #off = 0;

  /** `what` names the structure in error messages (e.g. `TPMS_ATTEST`). */
  constructor(
    readonly buf: Uint8Array,
    readonly what: string,
  ) {}

  get offset(): number {
    return this.#off;
  }

  get remaining(): number {
    return this.buf.length - this.#off;
  }

  get done(): boolean {
    return this.#off === this.buf.length;
  }

  #need(n: number, field: string): void {
    if (n > this.remaining) {
      throw new TpmParseError(this.what, `truncated at ${field}: need ${n} bytes at offset ${this.#off}, have ${this.remaining}`, {
        field,
        offset: this.#off,
      });
    }
  }

  u8(field = 'u8'): number {
    this.#need(1, field);
    return this.buf[this.#off++]!;
  }

  u16(field = 'u16'): number {
    this.#need(2, field);
    const v = (this.buf[this.#off]! << 8) | this.buf[this.#off + 1]!;
    this.#off += 2;
    return v;
  }

  u32(field = 'u32'): number {
    this.#need(4, field);
    const b = this.buf;
    const o = this.#off;
    this.#off += 4;
    return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
  }

  u64(field = 'u64'): bigint {
    const hi = this.u32(field);
    const lo = this.u32(field);
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** `n` bytes (a copy, so callers may keep it while the response buffer is reused). */
  bytes(n: number, field = 'bytes'): Buffer {
    this.#need(n, field);
    const out = Buffer.from(this.buf.subarray(this.#off, this.#off + n));
    this.#off += n;
    return out;
  }

  /** A TPM2B; `max` rejects sizes larger than the structure allows. */
  tpm2b(field = 'TPM2B', max = 0xffff): Buffer {
    const size = this.u16(`${field}.size`);
    if (size > max) throw new TpmParseError(this.what, `${field} size ${size} exceeds maximum ${max}`, { field, size, max });
    return this.bytes(size, field);
  }

  /** A TPM2B whose content is itself a structure: returns a sub-reader over exactly those bytes. */
  sized(field: string, what = field): Reader {
    return new Reader(this.tpm2b(field), what);
  }

  /** Fails when bytes are left over (structures must be consumed exactly). */
  end(): void {
    if (!this.done) throw new TpmParseError(this.what, `${this.remaining} trailing bytes at offset ${this.#off}`, { offset: this.#off });
  }
}
