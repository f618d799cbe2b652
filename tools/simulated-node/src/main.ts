#!/usr/bin/env node
/**
 * Entry point of a simulated node of the local cluster, a composition root of the bootstrapper
 * (docs/adr/0036-node-runtime.md): the bootstrapper's flags and stages (apps/bootstrapper, through
 * `@asterism/bootstrapper/runtime`) with the simulated node runtime (simulated-runtime.ts) instead
 * of kubeadm. Started by the local cluster (`up --backend local`, cluster.ts), bundled like the
 * product's programs (programs.ts of the tool).
 */
import { bootNode, parseFlags } from '@asterism/bootstrapper/runtime';
import { parseFlagsOrExit } from '@asterism/service-runtime';
import { SIMULATED_USAGE, splitSimulatedFlags } from './flags.js';
import { readLocalPrograms } from './programs.js';
import { SimulatedNodeRuntime } from './simulated-runtime.js';

async function main(): Promise<void> {
  const parsed = parseFlagsOrExit('simulated-node', SIMULATED_USAGE, () => {
    const { flags, rest } = splitSimulatedFlags(process.argv.slice(2));
    const config = parseFlags(rest);
    return config && { config, flags };
  });
  if (parsed === null) return;
  const programs = parsed.flags.localApps ? readLocalPrograms(parsed.flags.localApps) : undefined;
  await bootNode(parsed.config, (ctx) => new SimulatedNodeRuntime(ctx, parsed.flags, programs));
}

main().catch((err: unknown) => {
  process.stderr.write(`simulated-node: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
