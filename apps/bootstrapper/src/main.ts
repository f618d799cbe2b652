#!/usr/bin/env node
/**
 * bootstrapper entry point, the product's composition root (docs/adr/0036-node-runtime.md):
 * flags/environment -> the kubeadm node runtime (systemd, or `--init-system none` for an external
 * supervisor) -> the bootstrapper's stages (boot.ts). The local cluster's simulated nodes have
 * their own entry point with another runtime (tools/simulated-node).
 */
import { parseFlagsOrExit } from '@asterism/service-runtime';
import { bootNode } from './boot.js';
import { parseFlags, USAGE } from './flags.js';
import { kubeadmRuntime } from './runtime/kubeadm-runtime.js';

async function main(): Promise<void> {
  const config = parseFlagsOrExit('bootstrapper', USAGE, () => parseFlags(process.argv.slice(2)));
  if (config === null) return;
  await bootNode(config, kubeadmRuntime);
}

main().catch((err: unknown) => {
  process.stderr.write(`bootstrapper: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
