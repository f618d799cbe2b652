/**
 * A strict, bounds-checked DER reader (single-byte tags, definite minimal lengths up to 16 MiB):
 * walks X.509 structures in microseconds where the generic @peculiar/asn1-schema parser takes a
 * fraction of a millisecond. Used for aTLS certificates (libs/atls) and kubelet CSRs (joinservice).
 * Malformed input is a CryptoError DER_MALFORMED: the bytes come from peers.
 */
import { CryptoError } from './errors.js';

const malformed = (message: string) => new CryptoError('DER_MALFORMED', message);

/** One DER element: tag byte, content bounds, and the full encoding. */
export interface DerElement {
  readonly tag: number;
  /** Tag + length + content. */
  readonly raw: Buffer;
  readonly content: Buffer;
}

/** Reads consecutive DER elements from a buffer. */
export class DerReader {
  #pos = 0;

  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.#pos >= this.buf.length;
  }

  /** Tag of the next element without consuming it (undefined at the end). */
  peekTag(): number | undefined {
    return this.done ? undefined : this.buf[this.#pos];
  }

  /** Next element; with `tag` it must have that tag. */
  next(tag?: number): DerElement {
    const start = this.#pos;
    const b = this.buf;
    if (start + 2 > b.length) throw malformed('truncated DER element');
    const t = b[start]!;
    if ((t & 0x1f) === 0x1f) throw malformed('multi-byte DER tags are not supported');
    if (tag !== undefined && t !== tag) throw malformed(`expected DER tag 0x${tag.toString(16)}, got 0x${t.toString(16)}`);
    let p = start + 1;
    const first = b[p++]!;
    let len = first;
    if (first & 0x80) {
      const n = first & 0x7f;
      if (n === 0 || n > 3) throw malformed('unsupported DER length form');
      if (p + n > b.length) throw malformed('truncated DER length');
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + b[p++]!;
      if (len < 0x80 || (n > 1 && b[p - n] === 0)) throw malformed('non-minimal DER length');
    }
    if (p + len > b.length) throw malformed('DER element overruns its container');
    this.#pos = p + len;
    return { tag: t, raw: b.subarray(start, p + len), content: b.subarray(p, p + len) };
  }

  /** Next element only if it has `tag`. */
  optional(tag: number): DerElement | undefined {
    return this.peekTag() === tag ? this.next(tag) : undefined;
  }

  /** Fails unless everything was consumed. */
  end(what: string): void {
    if (!this.done) throw malformed(`trailing data after ${what}`);
  }
}

export const TAG = { BOOLEAN: 0x01, INTEGER: 0x02, BIT_STRING: 0x03, OCTET_STRING: 0x04, OID: 0x06, UTC_TIME: 0x17, GENERALIZED_TIME: 0x18, SEQUENCE: 0x30 } as const;

/** Dotted form of an OBJECT IDENTIFIER's content. */
export function decodeOid(content: Buffer): string {
  if (content.length === 0) throw malformed('empty OID');
  const arcs: number[] = [];
  let v = 0;
  for (let i = 0; i < content.length; i++) {
    const byte = content[i]!;
    if (v === 0 && byte === 0x80) throw malformed('non-minimal OID arc');
    v = v * 128 + (byte & 0x7f);
    if (v > Number.MAX_SAFE_INTEGER / 128) throw malformed('OID arc too large');
    if (!(byte & 0x80)) {
      if (arcs.length === 0) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else arcs.push(v);
      v = 0;
    } else if (i === content.length - 1) throw malformed('truncated OID');
  }
  return arcs.join('.');
}

/** UTCTime (YYMMDDHHMMSSZ, 1950-2049) or GeneralizedTime (YYYYMMDDHHMMSSZ). */
export function decodeTime(el: DerElement): Date {
  const s = el.content.toString('latin1');
  const m =
    el.tag === TAG.UTC_TIME ? /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(s) : el.tag === TAG.GENERALIZED_TIME ? /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(s) : null;
  if (!m) throw malformed(`unsupported certificate time ${JSON.stringify(s)}`);
  let year = Number(m[1]);
  if (el.tag === TAG.UTC_TIME) year += year < 50 ? 2000 : 1900;
  const ms = Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (Number.isNaN(ms)) throw malformed(`invalid certificate time ${JSON.stringify(s)}`);
  return new Date(ms);
}
