/**
 * The local cluster runs its production processes as the images do (docs/adr/0026-join-path-performance.md):
 * from esbuild bundles (deploy/src/bundle.ts) with the images' Node flags (deploy/src/node-flags.ts),
 * not through tsx. `up` builds them into the cluster folder; the bootstrappers get the other
 * programs' bundles through `--local-apps` (tools/simulated-node/src/programs.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APP_NODE_FLAGS, bundleApp } from '@asterism/deploy';
import type { ClusterLayout } from './layout.js';

/** Programs the bootstrapper starts itself (the rest of `--local-apps`). */
const STARTED_BY_BOOTSTRAPPER = ['keyservice', 'joinservice', 'verification-service'] as const;

/** How a bootstrapper process is started: its bundle and Node flags. */
export interface BootstrapperProgram {
  entry: string;
  nodeFlags: readonly string[];
}

/** The checkout this tool runs from (tools/local-cluster/src -> 3 levels up). */
const WORKSPACE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The simulated node's entry point (the bootstrapper's stages with the simulated runtime, docs/adr/0036-node-runtime.md). */
export const SIMULATED_NODE_ENTRY = join(WORKSPACE_ROOT, 'tools/simulated-node/src/main.ts');

/**
 * Bundles the simulated node (as `bootstrapper/main.mjs`, with the bootstrapper's Node flags) and
 * the programs it starts into `layout.programsDir` and writes `layout.programsFile`.
 */
export async function buildPrograms(layout: ClusterLayout): Promise<void> {
  await mkdir(layout.programsDir, { recursive: true, mode: 0o700 });
  const programs: Record<string, { entry: string; nodeFlags: string[] }> = {};
  const simulated = { file: SIMULATED_NODE_ENTRY, packageDir: join(WORKSPACE_ROOT, 'tools/simulated-node') };
  for (const name of ['bootstrapper', ...STARTED_BY_BOOTSTRAPPER] as const) {
    const { outfile } = await bundleApp(name, { outRoot: layout.programsDir, ...(name === 'bootstrapper' ? { entry: simulated } : {}) });
    programs[name] = { entry: outfile, nodeFlags: [...APP_NODE_FLAGS[name]] };
  }
  const startedByBootstrapper = Object.fromEntries(STARTED_BY_BOOTSTRAPPER.map((n) => [n, programs[n]]));
  await writeFile(layout.programsFile, `${JSON.stringify(startedByBootstrapper, null, 2)}\n`, { mode: 0o600 });
}

/** The bootstrapper's bundle (built by {@link buildPrograms}) and its Node flags. */
export function bootstrapperProgram(layout: ClusterLayout): BootstrapperProgram {
  return { entry: join(layout.programsDir, 'bootstrapper', 'main.mjs'), nodeFlags: APP_NODE_FLAGS.bootstrapper };
}
