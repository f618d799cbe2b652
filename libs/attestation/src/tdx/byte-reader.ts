import { AttestationError, type AttestationErrorCode } from '../errors.js';

/**
 * A bounds-checked little-endian cursor over untrusted bytes. Every read names the field it is
 * reading, so a truncated or inconsistent input fails with a typed error saying where.
 */
export class ByteReader {
  #pos: number;

  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
    private readonly code: AttestationErrorCode = 'QUOTE_INVALID',
    start = 0,
  ) {
    this.#pos = start;
  }

  /** Current offset from the start of the buffer. */
  get offset(): number {
    return this.#pos;
  }

  /** Bytes left after the cursor. */
  get remaining(): number {
    return this.buf.length - this.#pos;
  }

  /** The next `n` bytes (a view, not a copy), failing when fewer are left. */
  bytes(n: number, field: string): Buffer {
    if (n < 0 || this.#pos + n > this.buf.length) {
      throw new AttestationError(this.code, `${this.what}: ${field} needs ${n} bytes at offset ${this.#pos}, only ${this.remaining} left`, {
        details: { field, offset: this.#pos, needed: n, remaining: this.remaining },
      });
    }
    const out = this.buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  /** Little-endian unsigned 16-bit value. */
  u16(field: string): number {
    return this.bytes(2, field).readUInt16LE(0);
  }

  /** Little-endian unsigned 32-bit value. */
  u32(field: string): number {
    return this.bytes(4, field).readUInt32LE(0);
  }
}
