/**
 * Boot-time probe for manual runs (docs/protocol/node-image.md "Boot time"): boots an image as a
 * TestNode, stamps every console line with wall-clock seconds since QEMU started, and prints the
 * stamped console when the bootstrapper logs "init server listening" (it waits for init; or the
 * time is up). With
 * `--init-server <attestation-config.json>` it then times the InitServer's first answer: an aTLS
 * handshake in which the node quotes its vTPM (read-pcrs.ts, as the image spec does).
 * Usage: tsx tools/image/src/vm/boot-timing.ts <image.raw> <dir> [timeout-s] [--until <regex>]
 *        [--init-server <attestation-config.json>] [--no-lock]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { ClusterLock } from './cluster-lock.js';
import { TestNode } from './test-node.js';
import { VM_ADDRESS } from './vm-network.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const untilAt = args.indexOf('--until');
  const until = untilAt >= 0 ? new RegExp(args.splice(untilAt, 2)[1] ?? '') : /"msg":"init server listening"/;
  const initAt = args.indexOf('--init-server');
  const initConfig = initAt >= 0 ? args.splice(initAt, 2)[1] : undefined;
  const [image, dir, timeoutS = '300'] = args.filter((a) => a !== '--no-lock');
  if (!image || !dir) throw new Error('usage: boot-timing.ts <image.raw> <dir> [timeout-s]');
  mkdirSync(dir, { recursive: true });
  // A probe's VM has its own namespace; --no-lock boots beside a running cluster (timings then show the load).
  if (process.argv.includes('--no-lock')) ClusterLock.acquire = async () => ({ release: () => undefined }) as unknown as ClusterLock;
  const node = await TestNode.start(image, dir, `asterism-bt-${process.pid}`);
  const t0 = Date.now();
  const stamped: string[] = [];
  let seen = 0;
  let buf = '';
  const deadline = t0 + Number(timeoutS) * 1000;
  try {
    for (;;) {
      const text = node.vm.console();
      buf += text.slice(seen);
      seen = text.length;
      const lines = buf.split(/\r?\n/);
      buf = lines.pop() ?? '';
      for (const l of lines) stamped.push(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} ${l}`);
      if (until.test(text) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (initConfig && until.test(node.vm.console())) {
      const [cmd, argv] = node.execArgs(process.execPath, ['--import', join(WORKSPACE_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs'), join(import.meta.dirname, 'read-pcrs.ts'), `${VM_ADDRESS}:9000`, initConfig]);
      const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 360_000 });
      const answer = (r.stdout ?? '').trim().slice(0, 120) || `exit ${r.status}: ${(r.stderr ?? '').trim().slice(-300)}`;
      stamped.push(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} [init-server answered] ${answer}`);
    }
    stamped.push(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} [end] loadavg ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  } finally {
    writeFileSync(join(dir, 'stamped.log'), stamped.join('\n') + '\n');
    await node.stop();
  }
  process.stdout.write(stamped.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`boot-timing: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
