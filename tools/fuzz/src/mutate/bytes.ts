/**
 * Byte-level mutations of a whole input: bit flips, boundary values, 16/32-bit fields overwritten
 * (both byte orders), truncation and growth. `sameSize` keeps the length, for inputs embedded in a
 * container whose length fields must stay consistent.
 */
import type { Prng } from '../prng.js';

const BOUNDARY_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x20, 0x30, 0x0a];
const BOUNDARY_WORDS = [0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff];

/** One random byte-level mutation of `input` (a new buffer; the input is not changed). */
export function mutateBytes(input: Buffer, rng: Prng, sameSize = false): Buffer {
  const b = Buffer.from(input);
  if (b.length === 0) return sameSize ? b : Buffer.from([rng.int(256)]);
  const at = rng.int(b.length);
  const ops = sameSize ? 4 : 8;
  switch (rng.int(ops)) {
    case 0:
      b[at]! ^= 1 << rng.int(8);
      return b;
    case 1:
      b[at] = rng.pick(BOUNDARY_BYTES);
      return b;
    case 2:
      return word(b, at, rng);
    case 3:
      for (let i = 0, n = 1 + rng.int(8); i < n; i++) b[rng.int(b.length)] = rng.int(256);
      return b;
    case 4:
      return b.subarray(0, rng.int(b.length));
    case 5:
      return Buffer.concat([b.subarray(0, at), Buffer.alloc(1 + rng.int(64), rng.int(256)), b.subarray(at)]);
    case 6:
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + rng.int(64)))]);
    default:
      return Buffer.concat([b, b.subarray(at, at + 1 + rng.int(256))]);
  }
}

function word(b: Buffer, at: number, rng: Prng): Buffer {
  const v = rng.pick(BOUNDARY_WORDS);
  const size = rng.chance(0.5) ? 2 : 4;
  if (at + size > b.length) {
    b[at] = v & 0xff;
    return b;
  }
  const little = rng.chance(0.5);
  if (size === 2 && little) b.writeUInt16LE(v & 0xffff, at);
  else if (size === 2) b.writeUInt16BE(v & 0xffff, at);
  else if (little) b.writeUInt32LE(v >>> 0, at);
  else b.writeUInt32BE(v >>> 0, at);
  return b;
}
