/**
 * JSON-aware mutations: one value anywhere in the tree is replaced by a value of another type or
 * an edge value, a member is dropped, or a string is mutated as what it carries (base64 bytes and
 * PEM text go through the byte, DER and PEM mutators), then the tree is written back.
 */
import type { Prng } from '../prng.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const EDGE: Json[] = [null, true, false, 0, -1, 1.5, 2 ** 32, 2 ** 53 + 2, -(2 ** 31) - 1, 1e308, '', '0', '-1', 'null', 'A'.repeat(300), [], {}, [[[[[]]]]], { a: { b: {} } }, ['']];

/** Every (parent, key) in the tree, the root as (undefined, undefined). */
function slots(root: Json): Array<[Json[] | Record<string, Json>, string | number]> {
  const out: Array<[Json[] | Record<string, Json>, string | number]> = [];
  const walk = (v: Json) => {
    if (Array.isArray(v)) {
      v.forEach((c, i) => {
        out.push([v, i]);
        walk(c);
      });
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        out.push([v, k]);
        walk(v[k]!);
      }
    }
  };
  walk(root);
  return out;
}

/**
 * One mutation of the JSON text `input`; `bytes` mutates what a string carries. Undefined when
 * the input is not JSON (the caller falls back to byte mutations).
 */
export function mutateJson(input: Buffer, rng: Prng, bytes: (b: Buffer, sameSize: boolean) => Buffer): Buffer | undefined {
  let root: Json;
  try {
    root = JSON.parse(input.toString('utf8')) as Json;
  } catch {
    return undefined;
  }
  const all = slots(root);
  if (all.length === 0) return Buffer.from(JSON.stringify(rng.pick(EDGE)));
  const strings = all.filter(([p, k]) => typeof (p as Record<string, Json>)[k] === 'string' && ((p as Record<string, Json>)[k] as string).length > 8);
  const [parent, key] = strings.length > 0 && rng.chance(0.6) ? rng.pick(strings) : rng.pick(all);
  const obj = parent as Record<string | number, Json>;
  const value = obj[key]!;
  const op = rng.int(4);
  if (typeof value === 'string' && op < 3) obj[key] = mutateString(value, rng, bytes);
  else if (op === 0 && !Array.isArray(parent)) delete obj[key];
  else if (op === 1 && Array.isArray(parent)) parent.push(structuredClone(value));
  else obj[key] = structuredClone(rng.pick(EDGE));
  return Buffer.from(JSON.stringify(root));
}

/** A string mutated as base64 bytes (when it is canonical base64), as PEM text, or as characters. */
function mutateString(s: string, rng: Prng, bytes: (b: Buffer, sameSize: boolean) => Buffer): string {
  const raw = Buffer.from(s, 'base64');
  if (raw.length > 0 && raw.toString('base64') === s) {
    const m = bytes(raw, rng.chance(0.7)).toString('base64');
    return rng.chance(0.1) ? m.replace(/=+$/, '') : m;
  }
  const hex = /^[0-9a-fA-F]+$/.test(s) && s.length % 2 === 0;
  if (hex) return bytes(Buffer.from(s, 'hex'), rng.chance(0.7)).toString('hex');
  if (s.includes('-----BEGIN') || rng.chance(0.5)) return bytes(Buffer.from(s, 'latin1'), rng.chance(0.7)).toString('latin1');
  return s.slice(0, rng.int(s.length));
}
