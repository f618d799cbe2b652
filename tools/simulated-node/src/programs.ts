/**
 * The programs a local-backend node starts besides itself (docs/adr/0005-local-kubernetes-backend.md,
 * docs/adr/0026-join-path-performance.md): the keyservice and joinservice on the init node, and
 * the verification service on the other nodes (what the chart's DaemonSet pod is on a real node).
 * Without `--local-apps` they run from this checkout's TypeScript sources through tsx; the local
 * cluster passes a JSON file naming each program's esbuild bundle and Node flags, built by deploy/
 * as for the images, so that the cluster runs what production runs.
 *
 * ```json
 * { "keyservice": { "entry": "/abs/keyservice/main.mjs", "nodeFlags": ["--max-old-space-size=48"] }, ... }
 * ```
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AsterismError } from '@asterism/errors';

/** Root of this workspace (tools/simulated-node/src -> 3 levels up). */
export const WORKSPACE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Programs the local backend starts. */
export const LOCAL_PROGRAMS = ['keyservice', 'joinservice', 'verification-service'] as const;
export type LocalProgramName = (typeof LOCAL_PROGRAMS)[number];

/** One program: an ES module to run with node, and the Node flags before it. */
export interface LocalProgram {
  entry: string;
  nodeFlags: string[];
}

/** The programs `--local-apps` names (a program not named runs from the sources). */
export type LocalPrograms = Partial<Record<LocalProgramName, LocalProgram>>;

/** The `--local-apps` file is missing or not the expected shape. */
export class LocalProgramsError extends AsterismError<'LOCAL_APPS_INVALID'> {}

/** TypeScript entry points of the programs in this checkout (tsx). */
const SOURCES: Record<LocalProgramName, string> = {
  keyservice: 'apps/keyservice/src/main.ts',
  joinservice: 'apps/joinservice/src/main.ts',
  'verification-service': 'apps/verification-service/src/main.ts',
};

/** Reads and checks a `--local-apps` file (entries absolute paths, flags strings). */
export function readLocalPrograms(path: string): LocalPrograms {
  const invalid = (why: string) => new LocalProgramsError('LOCAL_APPS_INVALID', `--local-apps ${path}: ${why}`, { details: { path } });
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw invalid((err as Error).message);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw invalid('not a JSON object');
  const out: LocalPrograms = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!(LOCAL_PROGRAMS as readonly string[]).includes(name)) throw invalid(`unknown program "${name}" (want ${LOCAL_PROGRAMS.join(', ')})`);
    const p = value as Partial<LocalProgram> | null;
    if (typeof p?.entry !== 'string' || !isAbsolute(p.entry)) throw invalid(`${name}.entry must be an absolute path`);
    if (!Array.isArray(p.nodeFlags) || !p.nodeFlags.every((f) => typeof f === 'string' && f.startsWith('--'))) throw invalid(`${name}.nodeFlags must be a list of --flags`);
    out[name as LocalProgramName] = { entry: p.entry, nodeFlags: [...p.nodeFlags] };
  }
  return out;
}

/** `node <flags> <bundle>` from `programs`, else `node --import tsx <sources>`. */
export function programCommand(name: LocalProgramName, programs?: LocalPrograms): { binary: string; args: string[] } {
  const p = programs?.[name];
  if (p) return { binary: process.execPath, args: [...p.nodeFlags, p.entry] };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return { binary: process.execPath, args: ['--import', tsx, join(WORKSPACE_ROOT, SOURCES[name])] };
}
