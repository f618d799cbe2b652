/**
 * Cost of the attestation monitor (issue 33): CPU of the monitor process per node-check and per
 * round (= per minute at the default 60 s interval) for N simulated nodes (default 100) against a
 * real kube-apiserver (tools/k8s-testenv), with the nodes' verify.API servers in another process
 * (monitor-bench-nodes.ts). In the same run: the checks alone (no Kubernetes writes) as the
 * baseline of a full round, and qemu-vtpm checks on swtpm vs dummy checks (the validator's share).
 * Prints JSON lines with medians and the load average before and after.
 * Env: NODES (100), ROUNDS (5), VTPM_CHECKS (30).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { DummyValidator, Variant } from '@asterism/attestation';
import { startTestControlPlane } from '@asterism/k8s-testenv';
import { createNopLogger } from '@asterism/logger';
import { AttestationMonitor, BoundDisks, DenyListStore, GrpcAttestationSource, MonitorMetrics, NodeChecker, NodeStatusWriter, Quarantine, runningNodeValidator } from '@asterism/node-attestation';
import { ServiceMetrics } from '@asterism/service-runtime';
import { loadAverage, median } from './stats.js';

const NODES = Number(process.env.NODES ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const VTPM_CHECKS = Number(process.env.VTPM_CHECKS ?? 30);

/** CPU ms (user + system) and wall ms of `fn` in this process. */
async function measure(fn: () => Promise<unknown>): Promise<{ cpuMs: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 };
}

const print = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);

async function main(): Promise<void> {
  print({ bench: 'monitor', nodes: NODES, rounds: ROUNDS, loadBefore: loadAverage() });
  const cp = await startTestControlPlane();
  const nodesProc = spawn(process.execPath, ['--import', 'tsx', new URL('./monitor-bench-nodes.ts', import.meta.url).pathname, String(NODES), 'vtpm'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve) => createInterface({ input: nodesProc.stdout! }).once('line', resolve));
    const { dummy, vtpm } = JSON.parse(line) as { dummy: string[]; vtpm: string };
    const core = cp.admin.core;
    await core.createNamespace({ body: { metadata: { name: 'kube-system' } } }).catch(() => undefined);
    const endpoints = new Map<string, string>();
    for (let i = 0; i < NODES; i++) {
      await core.createNode({ body: { metadata: { name: `sim-${i}` } } });
      endpoints.set(`sim-${i}`, dummy[i]!);
    }
    const logger = createNopLogger();
    const status = new NodeStatusWriter(core);
    const checker = new NodeChecker({ source: new GrpcAttestationSource(), timeoutMs: 10_000 });
    const monitor = new AttestationMonitor({
      inputs: { read: async () => ({ configJson: '{}', mode: 'enforce' as const }) },
      nodes: status,
      quarantine: new Quarantine(status, new DenyListStore(core), new BoundDisks(core)),
      checker,
      buildValidator: runningNodeValidator(Variant.fromString('dummy'), logger),
      endpointOf: (n) => endpoints.get(n.name),
      metrics: new MonitorMetrics(new ServiceMetrics('bench', { defaultMetrics: false }).registry),
      logger,
      graceMs: 180_000,
      concurrency: 4,
    });
    await monitor.round(); // warm-up: first condition writes, Events, connections
    const validator = new DummyValidator();
    const checksOnly = async () => {
      const names = [...endpoints.keys()];
      let next = 0;
      await Promise.all(Array.from({ length: 4 }, async () => {
        for (let i = next++; i < names.length; i = next++) await checker.check({ name: names[i]!, endpoint: endpoints.get(names[i]!)! }, validator);
      }));
    };
    const full: Array<{ cpuMs: number; wallMs: number }> = [];
    const base: Array<{ cpuMs: number; wallMs: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      base.push(await measure(checksOnly));
      full.push(await measure(() => monitor.round()));
    }
    const m = (xs: Array<{ cpuMs: number; wallMs: number }>, k: 'cpuMs' | 'wallMs') => Math.round(median(xs.map((x) => x[k])) * 10) / 10;
    print({ case: 'round (checks + Kubernetes records)', nodes: NODES, cpuMsMedian: m(full, 'cpuMs'), wallMsMedian: m(full, 'wallMs'), cpuMsPerNode: Math.round((m(full, 'cpuMs') / NODES) * 100) / 100, cpuSecondsPerMinuteAt60s: Math.round(m(full, 'cpuMs')) / 1000 });
    print({ case: 'baseline: checks only (dummy, no Kubernetes)', nodes: NODES, cpuMsMedian: m(base, 'cpuMs'), wallMsMedian: m(base, 'wallMs'), cpuMsPerNode: Math.round((m(base, 'cpuMs') / NODES) * 100) / 100 });
    const vtpmValidator = runningNodeValidator(Variant.fromString('qemu-vtpm'), logger)('{"measurements":{}}');
    const vt: Array<{ cpuMs: number; wallMs: number }> = [];
    const dm: Array<{ cpuMs: number; wallMs: number }> = [];
    for (let i = 0; i < VTPM_CHECKS; i++) {
      vt.push(await measure(() => checker.check({ name: 'vtpm', endpoint: vtpm }, vtpmValidator)));
      dm.push(await measure(() => checker.check({ name: 'dummy', endpoint: dummy[0]! }, validator)));
    }
    print({ case: 'one check, qemu-vtpm on swtpm', checks: VTPM_CHECKS, cpuMsMedian: m(vt, 'cpuMs'), wallMsMedian: m(vt, 'wallMs') });
    print({ case: 'one check, dummy (baseline)', checks: VTPM_CHECKS, cpuMsMedian: m(dm, 'cpuMs'), wallMsMedian: m(dm, 'wallMs') });
  } finally {
    nodesProc.kill('SIGTERM');
    await cp.stop();
    print({ loadAfter: loadAverage() });
  }
}

await main();
