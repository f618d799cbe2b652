/** A command-line problem; the service's main prints it with the usage and exits 2. */
export class FlagError extends Error {}

/** An integer flag within [min, max]; `fallback` when absent. */
export function intFlag(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new FlagError(`invalid value "${raw}" for --${name}: not an integer`);
  const n = Number(raw);
  if (n < min || n > max) throw new FlagError(`invalid value ${n} for --${name}: must be between ${min} and ${max}`);
  return n;
}

/**
 * Runs a service's flag parser: a FlagError prints `<program>: <message>`, the usage, and exits
 * 2; `null` (help requested) prints the usage to stdout and returns null.
 */
export function parseFlagsOrExit<T>(program: string, usage: string, parse: () => T | null): T | null {
  let config: T | null;
  try {
    config = parse();
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`${program}: ${err.message}\n\n${usage}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (config === null) process.stdout.write(`${usage}\n`);
  return config;
}
