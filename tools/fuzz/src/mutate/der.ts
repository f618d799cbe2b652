/**
 * DER-aware mutations, so the fuzz reaches inside certificates instead of stopping at the first
 * length check: an element's length or tag, INTEGERs (serials, RSA moduli and exponents), OIDs,
 * times, and public keys (EC points moved off their curve, compressed or malformed prefixes, RSA
 * keys with a broken modulus or exponent). Every mutation keeps the byte count, so a certificate
 * embedded in a larger structure (a quote's PCK chain, a certificate table) stays where it was.
 */
import type { Prng } from '../prng.js';

/** One element of a DER tree: where its header, length and content are. */
export interface Tlv {
  readonly tagAt: number;
  readonly tag: number;
  readonly lenAt: number;
  readonly contentAt: number;
  readonly end: number;
}

const MAX_ELEMENTS = 4096;

/** Reads one element header at `at`; undefined when it does not fit inside `[at, to)`. */
function header(b: Buffer, at: number, to: number): Tlv | undefined {
  if (at + 2 > to) return undefined;
  const tag = b[at]!;
  if ((tag & 0x1f) === 0x1f) return undefined;
  let p = at + 1;
  let len = b[p++]!;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || p + n > to) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[p++]!;
  }
  if (p + len > to) return undefined;
  return { tagAt: at, tag, lenAt: at + 1, contentAt: p, end: p + len };
}

/**
 * The elements of the DER in `[from, to)`, depth first; constructed elements are entered, and so
 * are BIT and OCTET STRINGs that hold DER themselves (SPKI keys, extension values).
 */
export function derElements(b: Buffer, from = 0, to = b.length, out: Tlv[] = []): Tlv[] {
  let at = from;
  while (at < to && out.length < MAX_ELEMENTS) {
    const el = header(b, at, to);
    if (!el) break;
    out.push(el);
    if (el.tag & 0x20) derElements(b, el.contentAt, el.end, out);
    else if (el.tag === 0x03 && b[el.contentAt] === 0 && b[el.contentAt + 1] === 0x30) derElements(b, el.contentAt + 1, el.end, out);
    else if (el.tag === 0x04 && b[el.contentAt] === 0x30) derElements(b, el.contentAt, el.end, out);
    at = el.end;
  }
  return out;
}

/** Byte ranges of the DER certificates (SEQUENCE { SEQUENCE tbs, ... } with a 2-byte length) inside `b`. */
export function findDerCertificates(b: Buffer): Array<{ start: number; end: number }> {
  const found: Array<{ start: number; end: number }> = [];
  for (let i = 0; i + 8 < b.length; i++) {
    if (b[i] !== 0x30 || b[i + 1] !== 0x82 || b[i + 4] !== 0x30 || b[i + 5] !== 0x82) continue;
    const end = i + 4 + b.readUInt16BE(i + 2);
    if (end > b.length || i + 8 + b.readUInt16BE(i + 6) > end) continue;
    found.push({ start: i, end });
    i = end - 1;
  }
  return found;
}

const TAGS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0c, 0x13, 0x16, 0x17, 0x18, 0x1e, 0x30, 0x31, 0x80, 0xa0, 0xa3, 0xff];

/** One same-size DER mutation of `b` inside `[from, to)` (a new buffer); a byte flip when no element parses. */
export function mutateDer(input: Buffer, rng: Prng, from = 0, to = input.length): Buffer {
  const b = Buffer.from(input);
  const els = derElements(b, from, to);
  if (els.length === 0) {
    if (to > from) b[from + rng.int(to - from)]! ^= 1 << rng.int(8);
    return b;
  }
  const keys = els.filter((e) => e.tag === 0x03 && e.end - e.contentAt > 8);
  const op = rng.int(7);
  if (op === 0 && keys.length > 0) return publicKey(b, rng.pick(keys), rng);
  const el = rng.pick(els);
  if (op === 1 || op === 0) return length(b, el, rng);
  if (op === 2) {
    b[el.tagAt] = rng.pick(TAGS);
    return b;
  }
  const ofTag = (t: number) => els.filter((e) => e.tag === t && e.end > e.contentAt);
  const target = op === 3 ? ofTag(0x02) : op === 4 ? ofTag(0x06) : op === 5 ? [...ofTag(0x17), ...ofTag(0x18)] : [el];
  return content(b, target.length > 0 ? rng.pick(target) : el, rng, op);
}

/** A length field changed: one more, one less, zero, indefinite, a long form, or random. */
function length(b: Buffer, el: Tlv, rng: Prng): Buffer {
  const n = el.contentAt - el.lenAt;
  const len = el.end - el.contentAt;
  if (n === 1) {
    b[el.lenAt] = rng.pick([len + 1, len - 1, 0, 0x80, 0x81, 0x84, 0xff, rng.int(256)]) & 0xff;
    return b;
  }
  if (rng.chance(0.3)) b[el.lenAt] = rng.pick([0x80, 0x81, 0x84, 0x85, 0xff, 0x80 | (n - 1)]);
  else {
    const at = el.lenAt + 1 + rng.int(n - 1);
    b[at] = rng.pick([b[at]! + 1, b[at]! - 1, 0, 0xff]) & 0xff;
  }
  return b;
}

/** INTEGER, OID, time or any content: zeroed, sign bit set, non-minimal, a digit replaced, a bit flipped. */
function content(b: Buffer, el: Tlv, rng: Prng, op: number): Buffer {
  const at = el.contentAt + rng.int(el.end - el.contentAt);
  if (op === 3) {
    const v = rng.int(4);
    if (v === 0) b.fill(0, el.contentAt, el.end);
    else if (v === 1) b[el.contentAt] = 0x80 | b[el.contentAt]!;
    else if (v === 2) b[el.contentAt] = 0;
    else b.fill(0xff, el.contentAt, el.end);
  } else if (op === 4) {
    b[at] = rng.pick([0x80, 0xff, 0x00, b[at]! ^ 0x80]);
  } else if (op === 5) {
    b[at] = rng.pick([0x39, 0x30, 0x5a, 0x2b, 0x2d, 0x20, 0x61]);
  } else {
    b[at]! ^= 1 << rng.int(8);
  }
  return b;
}

/**
 * A public key broken in a way a certificate parser must survive: an EC point (BIT STRING 00 04
 * X Y) moved off its curve, given a compressed or invalid prefix, or zeroed; an RSA key (BIT
 * STRING holding SEQUENCE { n, e }) with a flipped modulus bit or a degenerate exponent.
 */
function publicKey(b: Buffer, bits: Tlv, rng: Prng): Buffer {
  const start = bits.contentAt + 1;
  if (b[start] === 0x04) {
    const v = rng.int(4);
    if (v === 0) b[bits.end - 1]! ^= 1 << rng.int(8);
    else if (v === 1) b[start + 1 + rng.int(bits.end - start - 1)]! ^= 1 << rng.int(8);
    else if (v === 2) b[start] = rng.pick([0x00, 0x02, 0x03, 0x05, 0x06, 0xff]);
    else b.fill(0, start + 1, bits.end);
    return b;
  }
  const ints = derElements(b, start, bits.end).filter((e) => e.tag === 0x02 && e.end > e.contentAt);
  if (ints.length === 0) {
    b[start + rng.int(bits.end - start)]! ^= 1 << rng.int(8);
    return b;
  }
  const n = ints[0]!;
  const e = ints[ints.length - 1]!;
  const v = rng.int(4);
  if (v === 0) b[n.contentAt + rng.int(n.end - n.contentAt)]! ^= 1 << rng.int(8);
  else if (v === 1) b.fill(0, e.contentAt, e.end);
  else if (v === 2) b[e.end - 1] = rng.pick([0x00, 0x01, 0x02, 0x03]);
  else b[n.end - 1]! &= 0xfe; // an even modulus
  return b;
}
