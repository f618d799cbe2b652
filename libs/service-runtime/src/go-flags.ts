import { parseArgs, type ParseArgsConfig } from 'node:util';
import { FlagError } from './cli-flags.js';

/**
 * Makes Go-style command lines digestible for node:util parseArgs: Go's flag package accepts
 * `-name=value`, `-name value` and negative numbers as values (`-v -1`), which parseArgs would
 * read as a cluster of short options. Single-dash words become double-dash, and a flag followed
 * by a negative number gets it attached with `=`. `-h` stays a short option.
 */
export function normalizeGoFlags(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (/^-[A-Za-z][\w-]*(=.*)?$/.test(arg) && arg !== '-h') arg = `-${arg}`;
    const next = argv[i + 1];
    if (/^--[A-Za-z][\w-]*$/.test(arg) && next !== undefined && /^-\d+$/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/**
 * Parses a Go-style command line (see {@link normalizeGoFlags}) against `options` with
 * node:util parseArgs (strict, no positionals); any problem is a FlagError with parseArgs' message.
 */
export function parseGoFlags<const O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: normalizeGoFlags(argv), strict: true, allowPositionals: false, options }).values;
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
}
