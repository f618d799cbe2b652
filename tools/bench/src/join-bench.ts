// Join tickets per second and per CPU: N concurrent attested joiners (qemu-vtpm on a pool of swtpm
// instances) against the joinservice process wired to a real kube-apiserver (tools/k8s-testenv)
// and a keyservice process. Each join is what a node does: a new aTLS channel (client evidence =
// a TPM quote, validated by the joinservice) from the node's own source address, one
// IssueJoinTicket, close. The baseline in the same run, "attestation only", is the same channel
// with one grpc.health.v1 Check instead (the aTLS gate validates the evidence on every call). With
// BASELINE=<git ref>, the joinservice as built from that ref runs beside this checkout's and every
// block runs against both (before/after in one run).
//
//   npx tsx tools/bench/src/join-bench.ts
//     env: NS=1,8,32 TICKETS=64 ROUNDS=2 TPMS=8 MAX_BLOCK_S=60
//          IDENTITY_BINDING=strict|off|off,strict (the joinservice's --identity-binding, strict is
//          its default; with both, one joinservice per mode and build, every block against each)
//          MODES=attestation,ticket (both by default; `attestation` alone profiles the aTLS side)
//          RUNTIME=bundle|ts (services from their esbuild bundles with the image's Node flags, as in
//          production, or through tsx); BASELINE=<git ref>;
//          JOINSERVICE_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (profiling)
//
// Per block (target x mode x N, orders alternating, ROUNDS rounds): joins/s, latency p50/p99,
// failures, and CPU ms per join of every process from /proc: joinservice, keyservice,
// kube-apiserver, etcd, kube-controller-manager, the generator (this process) and the swtpm pool.
// Medians over rounds.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import type { QemuVtpmIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { startJoinBenchEnv, type BenchNode, type JoinBenchEnv, type JoinTarget } from './join-bench-env.js';
import { cpuMs, processTree } from './proc-stats.js';
import { loadAverage, median, quantile, ratio } from './stats.js';

type Mode = 'full ticket' | 'attestation only';
const PROCS = ['joinservice', 'keyservice', 'apiserver', 'etcd', 'controllerManager', 'swtpm', 'generator'] as const;
type Proc = (typeof PROCS)[number];

interface Block {
  joinsPerSec: number;
  latenciesMs: number[];
  failures: number;
  done: number;
  cpuMsPerJoin: Record<Proc, number>;
}

const Health = grpc.makeGenericClientConstructor(healthService as unknown as grpc.ServiceDefinition, 'Health');
type HealthClient = grpc.Client & { check(req: { service: string }, cb: (e: grpc.ServiceError | null) => void): void };

/** CPU ms so far of every measured process (swtpm: the sum over this process's swtpm children). */
function cpuSnapshot(env: JoinBenchEnv, target: JoinTarget): Record<Proc, number> {
  const swtpm = processTree(process.pid)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'swtpm';
      } catch {
        return false;
      }
    })
    .reduce((n, p) => n + cpuMs(p), 0);
  const self = process.cpuUsage();
  return {
    joinservice: cpuMs(target.pid),
    keyservice: cpuMs(env.pids.keyservice),
    apiserver: cpuMs(env.pids.apiserver),
    etcd: cpuMs(env.pids.etcd),
    controllerManager: cpuMs(env.pids.controllerManager),
    swtpm,
    generator: (self.user + self.system) / 1000,
  };
}

/** One join: a new aTLS channel (fresh evidence) from the node's address, one call, close. */
function joinOnce(env: JoinBenchEnv, target: JoinTarget, mode: Mode, issuer: QemuVtpmIssuer, node: BenchNode): Promise<void> {
  const credentials = atlsChannelCredentials({ issuer, localAddress: node.address });
  return new Promise<void>((resolve, reject) => {
    const deadline = new Date(Date.now() + 30_000);
    if (mode === 'attestation only') {
      const client = new Health(target.endpoint, credentials) as unknown as HealthClient;
      client.check({ service: 'join.API' }, (err) => (client.close(), err ? reject(err) : resolve()));
      return;
    }
    const client = new joinApi.APIClient(target.endpoint, credentials);
    const req: joinApi.IssueJoinTicketRequest = { diskUuid: crypto.randomUUID(), certificateRequest: node.csr, isControlPlane: false, hostPublicKey: env.hostKey, hostCertificatePrincipals: [node.address] };
    client.issueJoinTicket(req, new grpc.Metadata(), { deadline }, (err) => (client.close(), err ? reject(err) : resolve()));
  });
}

let nextNode = 0;

async function runBlock(env: JoinBenchEnv, target: JoinTarget, mode: Mode, n: number, tickets: number, maxMs: number): Promise<Block> {
  const latenciesMs: number[] = [];
  let failures = 0;
  let next = 0;
  const cpu0 = cpuSnapshot(env, target);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tickets && performance.now() - t0 < maxMs) {
        const i = next++;
        const t = performance.now();
        try {
          await joinOnce(env, target, mode, env.issuers[i % env.issuers.length]!, env.nodes[nextNode++ % env.nodes.length]!);
          latenciesMs.push(performance.now() - t);
        } catch (err) {
          if (failures++ === 0) console.error(`[join-bench] ${target.name} ${mode} N=${n}: ${(err as Error).message}`);
        }
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = cpuSnapshot(env, target);
  const done = latenciesMs.length;
  const cpuMsPerJoin = Object.fromEntries(PROCS.map((p) => [p, done ? (cpu1[p] - cpu0[p]) / done : NaN])) as Record<Proc, number>;
  return { joinsPerSec: done / (wallMs / 1000), latenciesMs, failures, done, cpuMsPerJoin };
}

type Summary = ReturnType<typeof summary>;

function summary(blocks: Block[]) {
  const lat = blocks.flatMap((b) => b.latenciesMs);
  return {
    joinsPerSec: median(blocks.map((b) => b.joinsPerSec)),
    p50Ms: median(lat),
    p99Ms: quantile(lat, 0.99),
    failures: blocks.reduce((s, b) => s + b.failures, 0),
    joins: blocks.reduce((s, b) => s + b.done, 0),
    cpuMsPerJoin: Object.fromEntries(PROCS.map((p) => [p, median(blocks.map((b) => b.cpuMsPerJoin[p]))])) as Record<Proc, number>,
  };
}

/** Every block of the run: rounds x N x mode x target, orders alternating so that drift hits all alike. */
async function runAll(world: JoinBenchEnv, env: { NS: number[]; TICKETS: number; ROUNDS: number; MAX_BLOCK_S: number; MODES: Mode[] }): Promise<Map<string, Summary>> {
  const modes = env.MODES;
  for (const t of world.targets) for (const m of modes) await runBlock(world, t, m, 4, 16, 60_000); // JIT, token pool, caches, AKs
  const blocks = new Map<string, Block[]>();
  for (let r = 0; r < env.ROUNDS; r++) {
    for (const n of env.NS) {
      for (const m of r % 2 === 0 ? modes : [...modes].reverse()) {
        for (const t of r % 2 === 0 ? world.targets : [...world.targets].reverse()) {
          const key = `${t.name}|${m}|${n}`;
          blocks.set(key, [...(blocks.get(key) ?? []), await runBlock(world, t, m, n, env.TICKETS, env.MAX_BLOCK_S * 1000)]);
        }
      }
    }
  }
  return new Map([...blocks].map(([k, b]) => [k, summary(b)]));
}

/** The table: per N and target both modes and full/attestation; with a baseline, current/baseline. */
function table(results: Map<string, Summary>, ns: number[], targets: JoinTarget[], modes: Mode[]) {
  const rows = [];
  const get = (t: string, m: Mode, n: number) => results.get(`${t}|${m}|${n}`)!;
  for (const n of ns) {
    for (const t of targets) {
      for (const mode of modes) {
        const s = get(t.name, mode, n);
        rows.push({
          N: n,
          joinservice: t.name,
          mode,
          'joins/s': s.joinsPerSec.toFixed(1),
          'p50 ms': s.p50Ms.toFixed(1),
          'p99 ms': s.p99Ms.toFixed(1),
          'fail/joins': `${s.failures}/${s.joins}`,
          ...Object.fromEntries(PROCS.map((p) => [`${p} ms`, s.cpuMsPerJoin[p].toFixed(2)])),
        });
      }
      if (modes.length > 1) {
        const [full, att] = [get(t.name, 'full ticket', n), get(t.name, 'attestation only', n)];
        rows.push({ N: n, joinservice: t.name, mode: 'full / attestation', 'joins/s': ratio(full.joinsPerSec, att.joinsPerSec), 'joinservice ms': ratio(full.cpuMsPerJoin.joinservice, att.cpuMsPerJoin.joinservice) });
      }
    }
    rows.push(...comparisons(targets, modes, n, get));
  }
  return rows;
}

/** current / baseline per binding mode and mode; strict - off (joinservice CPU ms per ticket) per build. */
function comparisons(targets: JoinTarget[], modes: Mode[], n: number, get: (t: string, m: Mode, n: number) => Summary) {
  const rows = [];
  for (const t of targets.filter((x) => x.build === 'current')) {
    const base = targets.find((x) => x.build === 'baseline' && x.identityBinding === t.identityBinding);
    if (!base) continue;
    for (const m of modes) {
      const [cur, b] = [get(t.name, m, n), get(base.name, m, n)];
      rows.push({ N: n, joinservice: `${t.name} / ${base.name}`, mode: m, 'joins/s': ratio(cur.joinsPerSec, b.joinsPerSec), 'p99 ms': ratio(cur.p99Ms, b.p99Ms), 'joinservice ms': ratio(cur.cpuMsPerJoin.joinservice, b.cpuMsPerJoin.joinservice) });
    }
  }
  if (!modes.includes('full ticket')) return rows;
  for (const strict of targets.filter((x) => x.identityBinding === 'strict')) {
    const off = targets.find((x) => x.build === strict.build && x.identityBinding === 'off');
    if (!off) continue;
    const d = get(strict.name, 'full ticket', n).cpuMsPerJoin.joinservice - get(off.name, 'full ticket', n).cpuMsPerJoin.joinservice;
    rows.push({ N: n, joinservice: `${strict.name} - ${off.name}`, mode: 'full ticket', 'joinservice ms': d.toFixed(2) });
  }
  return rows;
}

/** `strict`, `off` or both (comma-separated), in the order given. */
function bindingModes(v: string): Array<'strict' | 'off'> {
  const modes = v.split(',').map((m) => m.trim());
  if (modes.length === 0 || !modes.every((m) => m === 'strict' || m === 'off')) throw new Error(`IDENTITY_BINDING=${v}: expected strict, off or off,strict`);
  return modes as Array<'strict' | 'off'>;
}

/** `attestation` and/or `ticket` (comma-separated). */
function benchModes(v: string): Mode[] {
  const names: Record<string, Mode> = { attestation: 'attestation only', ticket: 'full ticket' };
  const modes = v.split(',').map((m) => names[m.trim()]);
  if (modes.length === 0 || modes.some((m) => m === undefined)) throw new Error(`MODES=${v}: expected attestation, ticket or attestation,ticket`);
  return modes as Mode[];
}

async function main(): Promise<void> {
  const unavailable = testenvUnavailable();
  if (unavailable) throw new Error(unavailable);
  const env = {
    NS: (process.env.NS ?? '1,8,32').split(',').map(Number),
    TICKETS: Number(process.env.TICKETS ?? 64),
    ROUNDS: Number(process.env.ROUNDS ?? 2),
    TPMS: Number(process.env.TPMS ?? 8),
    MAX_BLOCK_S: Number(process.env.MAX_BLOCK_S ?? 60),
    RUNTIME: (process.env.RUNTIME ?? 'bundle') === 'ts' ? ('ts' as const) : ('bundle' as const),
    IDENTITY_BINDING: bindingModes(process.env.IDENTITY_BINDING ?? 'strict'),
    MODES: benchModes(process.env.MODES ?? 'attestation,ticket'),
    ...(process.env.BASELINE ? { BASELINE: process.env.BASELINE } : {}),
  };
  const loadBefore = loadAverage();
  const world = await startJoinBenchEnv({
    tpms: env.TPMS,
    runtime: env.RUNTIME,
    joinserviceNodeArgs: (process.env.JOINSERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean),
    identityBindings: env.IDENTITY_BINDING,
    ...(env.BASELINE ? { baselineRef: env.BASELINE } : {}),
  });
  let results: Map<string, Summary>;
  try {
    results = await runAll(world, env);
  } finally {
    await world.stop();
  }
  const load = { before: loadBefore, after: loadAverage() };
  console.log(`join benchmark: ${env.ROUNDS} rounds x ${env.TICKETS} joins per block (max ${env.MAX_BLOCK_S} s), ${env.TPMS} swtpm, identity binding ${env.IDENTITY_BINDING.join(' and ')}, services from ${env.RUNTIME === 'ts' ? 'tsx' : 'bundles'}${env.BASELINE ? `, baseline ${env.BASELINE}` : ''}; CPU ms per join per process (medians)`);
  console.log(`before: ${load.before}; after: ${load.after}`);
  console.table(table(results, env.NS, world.targets, env.MODES));
  console.log(JSON.stringify({ bench: 'join', env, load, results: Object.fromEntries(results) }));
}

await main();
