/**
 * Mutations of PEM blocks inside text: the base64 body is decoded, mutated as DER (same size) and
 * written back in the same places, line breaks included, so the text around it (a JSON string, a
 * quote's length-prefixed certification data) stays consistent.
 */
import type { Prng } from '../prng.js';
import { mutateDer } from './der.js';

const PEM = /-----BEGIN [A-Z0-9 ]+-----([\s\S]*?)-----END [A-Z0-9 ]+-----/g;

/** Character ranges of the PEM bodies in `text`. */
export function pemBodies(text: string): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (const m of text.matchAll(PEM)) {
    const start = m.index + m[0].indexOf('-----', 5) + 5;
    out.push({ start, end: start + m[1]!.length });
  }
  return out;
}

/** `input` with one PEM block's certificate DER-mutated; undefined when it holds no usable PEM block. */
export function mutatePem(input: Buffer, rng: Prng): Buffer | undefined {
  const text = input.toString('latin1');
  const bodies = pemBodies(text);
  if (bodies.length === 0) return undefined;
  const { start, end } = rng.pick(bodies);
  const body = text.slice(start, end);
  const compact = body.replace(/\s+/g, '');
  const der = Buffer.from(compact, 'base64');
  if (der.length === 0 || der.toString('base64') !== compact) return undefined;
  const encoded = mutateDer(der, rng).toString('base64');
  let k = 0;
  let out = '';
  for (const ch of body) out += /\s/.test(ch) ? ch : encoded[k++];
  return Buffer.concat([input.subarray(0, start), Buffer.from(out, 'latin1'), input.subarray(end)]);
}
