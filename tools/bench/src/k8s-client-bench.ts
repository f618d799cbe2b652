// Kubernetes client connection reuse: @kubernetes/client-node 1.4 as shipped (a new https.Agent,
// so a new TCP + TLS connection, per request) vs libs/k8s KeepAliveKubeConfig (one keep-alive agent
// per kubeconfig), against the real kube-apiserver of tools/k8s-testenv, in one run.
//
//   npx tsx tools/bench/src/k8s-client-bench.ts     (env: CALLS=200 ROUNDS=4 CONC=8)
//
// Sequential: CALLS GETs of namespace `default` per mode per round (admin client certificate), modes
// alternating per round; per call the latency, per block the client process CPU (process.cpuUsage)
// and the kube-apiserver's CPU (/proc), divided by the calls. Concurrent: CONC loops, same counts.
import * as k8s from '@kubernetes/client-node';
import { KeepAliveKubeConfig } from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable } from '@asterism/k8s-testenv';
import { cpuMs } from './proc-stats.js';
import { median, quantile, ratio } from './stats.js';

type Mode = 'per-request agent' | 'keep-alive agent';

interface Block {
  latenciesMs: number[];
  clientCpuUsPerCall: number;
  apiserverCpuUsPerCall: number;
  callsPerSec: number;
}

async function runBlock(core: k8s.CoreV1Api, calls: number, conc: number, apiserverPid: number): Promise<Block> {
  const latenciesMs: number[] = [];
  const cpu0 = process.cpuUsage();
  const api0 = cpuMs(apiserverPid);
  const t0 = performance.now();
  let left = calls;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (left-- > 0) {
        const t = performance.now();
        await core.readNamespace({ name: 'default' });
        latenciesMs.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    latenciesMs,
    clientCpuUsPerCall: (cpu.user + cpu.system) / calls,
    apiserverCpuUsPerCall: ((cpuMs(apiserverPid) - api0) * 1000) / calls,
    callsPerSec: calls / (wallMs / 1000),
  };
}

function summary(blocks: Block[]) {
  const lat = blocks.flatMap((b) => b.latenciesMs);
  return {
    p50Ms: median(lat),
    p99Ms: quantile(lat, 0.99),
    clientCpuUs: median(blocks.map((b) => b.clientCpuUsPerCall)),
    apiserverCpuUs: median(blocks.map((b) => b.apiserverCpuUsPerCall)),
    callsPerSec: median(blocks.map((b) => b.callsPerSec)),
  };
}

async function main(): Promise<void> {
  const unavailable = testenvUnavailable();
  if (unavailable) throw new Error(unavailable);
  const CALLS = Number(process.env.CALLS ?? 200);
  const ROUNDS = Number(process.env.ROUNDS ?? 4);
  const CONC = Number(process.env.CONC ?? 8);
  const cp = await startTestControlPlane();
  try {
    const apiserverPid = cp.processes.find((p) => p.name === 'kube-apiserver')!.child.pid!;
    const plain = new k8s.KubeConfig();
    plain.loadFromString(cp.adminKubeconfig);
    const keepAlive = KeepAliveKubeConfig.from(plain);
    const clients: Record<Mode, k8s.CoreV1Api> = {
      'per-request agent': plain.makeApiClient(k8s.CoreV1Api),
      'keep-alive agent': keepAlive.makeApiClient(k8s.CoreV1Api),
    };
    const modes = Object.keys(clients) as Mode[];
    for (const m of modes) await runBlock(clients[m], 20, 1, apiserverPid); // warm-up
    const results: Record<string, Block[]> = {};
    for (const [label, conc] of [['sequential', 1], [`${CONC} concurrent`, CONC]] as const) {
      for (let r = 0; r < ROUNDS; r++) {
        for (const m of r % 2 === 0 ? modes : [...modes].reverse()) {
          (results[`${label}|${m}`] ??= []).push(await runBlock(clients[m], CALLS, conc, apiserverPid));
        }
      }
    }
    const rows = Object.entries(results).map(([key, blocks]) => {
      const [load, mode] = key.split('|');
      const s = summary(blocks);
      return { load, mode, 'p50 ms': s.p50Ms.toFixed(2), 'p99 ms': s.p99Ms.toFixed(2), 'calls/s': s.callsPerSec.toFixed(0), 'client CPU us/call': s.clientCpuUs.toFixed(0), 'apiserver CPU us/call': s.apiserverCpuUs.toFixed(0) };
    });
    console.log(`readNamespace against kube-apiserver ${cp.server}, ${CALLS} calls x ${ROUNDS} rounds per mode, Node ${process.version}`);
    console.table(rows);
    for (const load of ['sequential', `${CONC} concurrent`]) {
      const a = summary(results[`${load}|per-request agent`]!);
      const b = summary(results[`${load}|keep-alive agent`]!);
      console.log(
        `${load}: keep-alive vs per-request: latency p50 ${ratio(a.p50Ms, b.p50Ms)}x lower, client CPU/call ${ratio(a.clientCpuUs, b.clientCpuUs)}x lower, apiserver CPU/call ${ratio(a.apiserverCpuUs, b.apiserverCpuUs)}x lower, throughput ${ratio(b.callsPerSec, a.callsPerSec)}x`,
      );
    }
    keepAlive.destroy();
  } finally {
    await cp.stop();
  }
}

await main();
