/**
 * The foreign-exception gate: every target's real seeds, then a fixed number of mutations of
 * them from a fixed seed, each handed to the target's parser. A parser may accept an input or
 * throw the project's typed error (an AsterismError subclass); anything else (a TypeError, a
 * RangeError, an OpenSSL error, a non-Error) is a foreign exception and is recorded with the
 * input (hex) that caused it.
 */
import { createHash } from 'node:crypto';
import { isAsterismError } from '@asterism/errors';
import { mutate, type MutationShape } from './mutate/index.js';
import { Prng } from './prng.js';

/** One real input of a target, named after the vector it comes from. */
export interface Seed {
  readonly name: string;
  readonly bytes: Buffer;
}

/** A parser that takes peer input, with the real inputs its mutations start from. */
export interface FuzzTarget {
  /** Stable name, e.g. `snp.verifier`. */
  readonly name: string;
  /** The function under test, as a reader finds it (`parseReport`, libs/attestation). */
  readonly parser: string;
  readonly seeds: readonly Seed[];
  /** Mutated inputs tried (the seeds themselves come on top). */
  readonly runs: number;
  readonly shape?: MutationShape;
  /**
   * Parses one input; resolves or returns when accepted, throws or rejects when refused. Returns
   * NOT_REACHED when the gate's own wrapper (e.g. protobuf's JSON mapping) could not turn the
   * input into what the parser takes, so the parser never saw it.
   */
  run(input: Buffer): unknown;
}

/** What a target's `run` returns when the mutated input never reached the parser. */
export const NOT_REACHED = Symbol('not reached');

/** A foreign exception: which target, which input, what escaped. */
export interface Finding {
  readonly target: string;
  readonly parser: string;
  readonly seed: string;
  /** Index of the input in the target's run (0-based; seeds first). */
  readonly index: number;
  readonly error: string;
  readonly stack: string;
  readonly inputHex: string;
}

/** What one target did. */
export interface TargetReport {
  readonly target: string;
  readonly parser: string;
  readonly seeds: string[];
  readonly inputs: number;
  /** SHA-256 over every input tried, in order: equal on every run (fixed seed), so CI runs compare. */
  readonly inputsSha256: string;
  readonly accepted: number;
  /** Inputs the gate's wrapper could not hand to the parser (see NOT_REACHED). */
  readonly notReached: number;
  /** Typed refusals by error code. */
  readonly refused: Record<string, number>;
  readonly foreign: number;
  /** Wall time and CPU time of this process (the machine is shared: CPU time is the stable figure). */
  readonly ms: number;
  readonly cpuMs: number;
}

/** At most this many findings per target keep their input (the count is always complete). */
const KEEP_FINDINGS = 5;

/** The generator seed of one target: the gate seed mixed with the target's name. */
export function targetSeed(name: string, gateSeed: number): number {
  return createHash('sha256').update(`${gateSeed}:${name}`).digest().readUInt32LE(0);
}

/** Runs one target: its seeds unchanged, then `runs` (scaled) mutations from a fixed seed. */
export async function runTarget(t: FuzzTarget, options: { gateSeed?: number; scale?: number } = {}): Promise<{ report: TargetReport; findings: Finding[] }> {
  const rng = new Prng(targetSeed(t.name, options.gateSeed ?? 1));
  const runs = Math.max(1, Math.round(t.runs * (options.scale ?? 1)));
  const refused: Record<string, number> = {};
  const findings: Finding[] = [];
  let accepted = 0;
  let notReached = 0;
  let foreign = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const total = t.seeds.length + runs;
  const digest = createHash('sha256');
  for (let i = 0; i < total; i++) {
    const seed = i < t.seeds.length ? t.seeds[i]! : rng.pick(t.seeds);
    const input = i < t.seeds.length ? seed.bytes : mutate(seed.bytes, rng, t.shape);
    digest.update(input);
    try {
      if ((await t.run(input)) === NOT_REACHED) notReached++;
      else accepted++;
    } catch (err) {
      if (isAsterismError(err)) {
        refused[err.code] = (refused[err.code] ?? 0) + 1;
        continue;
      }
      foreign++;
      if (findings.length < KEEP_FINDINGS) findings.push(finding(t, seed.name, i, err, input));
    }
  }
  const ms = Math.round(performance.now() - started);
  const used = process.cpuUsage(cpu);
  const cpuMs = Math.round((used.user + used.system) / 1000);
  return { report: { target: t.name, parser: t.parser, seeds: t.seeds.map((s) => s.name), inputs: total, inputsSha256: digest.digest('hex'), accepted, notReached, refused, foreign, ms, cpuMs }, findings };
}

function finding(t: FuzzTarget, seed: string, index: number, err: unknown, input: Buffer): Finding {
  const e = err instanceof Error ? err : undefined;
  return {
    target: t.name,
    parser: t.parser,
    seed,
    index,
    error: e ? `${e.constructor.name}: ${e.message}` : `non-Error thrown: ${String(err)}`,
    stack: (e?.stack ?? '').split('\n').slice(1, 6).join('\n'),
    inputHex: input.toString('hex'),
  };
}
