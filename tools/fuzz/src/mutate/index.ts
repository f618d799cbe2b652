/**
 * The mutation engine of the gate: one to three stacked mutations of a real vector, chosen by what
 * the input contains: DER certificates and PEM blocks are mutated structurally (see der.ts), JSON
 * by value (json.ts), anything else byte-wise (bytes.ts).
 */
import type { Prng } from '../prng.js';
import { mutateBytes } from './bytes.js';
import { findDerCertificates, mutateDer } from './der.js';
import { mutateJson } from './json.js';
import { mutatePem } from './pem.js';

export { derElements, findDerCertificates, mutateDer } from './der.js';
export { mutateBytes } from './bytes.js';

/** How an input may be mutated. */
export interface MutationShape {
  /** The input is JSON: mutate values as well as bytes. */
  readonly json?: boolean;
  /** Keep the byte count (embedded inputs). */
  readonly sameSize?: boolean;
}

/** One mutation, structure-aware where the input allows. */
export function mutateOnce(input: Buffer, rng: Prng, shape: MutationShape = {}): Buffer {
  const sameSize = shape.sameSize ?? false;
  const nested = (b: Buffer, same: boolean) => mutateOnce(b, rng, { sameSize: same });
  if (shape.json && rng.chance(0.8)) {
    const m = mutateJson(input, rng, nested);
    if (m) return m;
  }
  const roll = rng.int(10);
  if (roll < 4) {
    const m = mutatePem(input, rng);
    if (m) return m;
  }
  if (roll < 8) {
    const certs = findDerCertificates(input);
    if (certs.length > 0) {
      const c = rng.pick(certs);
      return mutateDer(input, rng, c.start, c.end);
    }
  }
  return mutateBytes(input, rng, sameSize);
}

/** One to three stacked mutations of `seed`. */
export function mutate(seed: Buffer, rng: Prng, shape: MutationShape = {}): Buffer {
  let out = mutateOnce(seed, rng, shape);
  for (let i = 0, n = rng.int(3); i < n; i++) out = mutateOnce(out, rng, shape);
  return out;
}
