// Join tickets per second and per CPU: N concurrent attested joiners (qemu-vtpm on a pool of swtpm
// instances) against the joinservice process wired to a real kube-apiserver (tools/k8s-testenv)
// and a keyservice process. Each join is what a node does: a new aTLS channel (client evidence =
// a TPM quote, validated by the joinservice), one IssueJoinTicket, close. The baseline in the same
// run, "attestation only", is the same channel with one grpc.health.v1 Check instead (the aTLS gate
// validates the evidence on every call).
//
//   npx tsx tools/bench/src/join-bench.ts   (env: NS=1,8,32 TICKETS=64 ROUNDS=2 TPMS=8 MAX_BLOCK_S=60;
//   JOINSERVICE_NODE_OPTIONS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the joinservice)
//
// Per block (mode x N, modes alternating, ROUNDS rounds): joins/s, latency p50/p99, failures, and
// CPU ms per join of every process from /proc: joinservice, keyservice, kube-apiserver, etcd,
// kube-controller-manager, the generator (this process) and the swtpm pool. Medians over rounds.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import type { QemuVtpmIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { kubeletCsrs, spreadSourceAddresses, startJoinBenchEnv, type JoinBenchEnv } from './join-bench-env.js';
import { cpuMs, processTree } from './proc-stats.js';
import { median, quantile, ratio } from './stats.js';

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
function cpuSnapshot(env: JoinBenchEnv): Record<Proc, number> {
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
    joinservice: cpuMs(env.pids.joinservice),
    keyservice: cpuMs(env.pids.keyservice),
    apiserver: cpuMs(env.pids.apiserver),
    etcd: cpuMs(env.pids.etcd),
    controllerManager: cpuMs(env.pids.controllerManager),
    swtpm,
    generator: (self.user + self.system) / 1000,
  };
}

/** One join: a new aTLS channel (fresh evidence), one call, close. */
function joinOnce(env: JoinBenchEnv, mode: Mode, issuer: QemuVtpmIssuer, csr: Buffer | undefined, diskUuid: string): Promise<void> {
  const credentials = atlsChannelCredentials({ issuer });
  return new Promise<void>((resolve, reject) => {
    const deadline = new Date(Date.now() + 30_000);
    if (mode === 'attestation only') {
      const client = new Health(env.endpoint, credentials) as unknown as HealthClient;
      client.check({ service: 'join.API' }, (err) => (client.close(), err ? reject(err) : resolve()));
      return;
    }
    const client = new joinApi.APIClient(env.endpoint, credentials);
    const req: joinApi.IssueJoinTicketRequest = { diskUuid, certificateRequest: csr!, isControlPlane: false, hostPublicKey: env.hostKey, hostCertificatePrincipals: ['10.9.0.7'] };
    client.issueJoinTicket(req, new grpc.Metadata(), { deadline }, (err) => (client.close(), err ? reject(err) : resolve()));
  });
}

async function runBlock(env: JoinBenchEnv, mode: Mode, n: number, tickets: number, maxMs: number, prefix: string): Promise<Block> {
  const csrs = mode === 'full ticket' ? await kubeletCsrs(prefix, tickets) : [];
  const latenciesMs: number[] = [];
  let failures = 0;
  let next = 0;
  const cpu0 = cpuSnapshot(env);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tickets && performance.now() - t0 < maxMs) {
        const i = next++;
        const t = performance.now();
        try {
          await joinOnce(env, mode, env.issuers[i % env.issuers.length]!, csrs[i], crypto.randomUUID());
          latenciesMs.push(performance.now() - t);
        } catch (err) {
          if (failures++ === 0) console.error(`[join-bench] ${mode} N=${n}: ${(err as Error).message}`);
        }
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = cpuSnapshot(env);
  const done = latenciesMs.length;
  const cpuMsPerJoin = Object.fromEntries(PROCS.map((p) => [p, done ? (cpu1[p] - cpu0[p]) / done : NaN])) as Record<Proc, number>;
  return { joinsPerSec: done / (wallMs / 1000), latenciesMs, failures, done, cpuMsPerJoin };
}

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

async function main(): Promise<void> {
  const unavailable = testenvUnavailable();
  if (unavailable) throw new Error(unavailable);
  const env = {
    NS: (process.env.NS ?? '1,8,32').split(',').map(Number),
    TICKETS: Number(process.env.TICKETS ?? 64),
    ROUNDS: Number(process.env.ROUNDS ?? 2),
    TPMS: Number(process.env.TPMS ?? 8),
    MAX_BLOCK_S: Number(process.env.MAX_BLOCK_S ?? 60),
  };
  const world = await startJoinBenchEnv(env.TPMS);
  const restore = spreadSourceAddresses(Number(world.endpoint.split(':')[1]));
  const results: Record<string, Block[]> = {};
  try {
    const modes: Mode[] = ['attestation only', 'full ticket'];
    for (const m of modes) await runBlock(world, m, 4, 16, 60_000, 'warmup'); // JIT, token pool, caches, AKs
    for (let r = 0; r < env.ROUNDS; r++) {
      for (const n of env.NS) {
        for (const m of r % 2 === 0 ? modes : [...modes].reverse()) {
          (results[`${m}|${n}`] ??= []).push(await runBlock(world, m, n, env.TICKETS, env.MAX_BLOCK_S * 1000, `r${r}-n${n}`));
        }
      }
    }
  } finally {
    restore();
    await world.stop();
  }
  const rows = [];
  for (const n of env.NS) {
    const full = summary(results[`full ticket|${n}`]!);
    const att = summary(results[`attestation only|${n}`]!);
    for (const [mode, s] of [['attestation only', att], ['full ticket', full]] as const) {
      rows.push({
        N: n,
        mode,
        'joins/s': s.joinsPerSec.toFixed(1),
        'p50 ms': s.p50Ms.toFixed(1),
        'p99 ms': s.p99Ms.toFixed(1),
        'fail/joins': `${s.failures}/${s.joins}`,
        ...Object.fromEntries(PROCS.map((p) => [`${p} ms`, s.cpuMsPerJoin[p].toFixed(2)])),
      });
    }
    rows.push({ N: n, mode: 'full / attestation', 'joins/s': ratio(full.joinsPerSec, att.joinsPerSec), 'joinservice ms': ratio(full.cpuMsPerJoin.joinservice, att.cpuMsPerJoin.joinservice) });
  }
  console.log(`join benchmark: ${env.ROUNDS} rounds x ${env.TICKETS} joins per block (max ${env.MAX_BLOCK_S} s), ${env.TPMS} swtpm, CPU ms per join per process (medians)`);
  console.table(rows);
  const json = Object.fromEntries(Object.entries(results).map(([k, b]) => [k, summary(b)]));
  console.log(JSON.stringify({ bench: 'join', env, results: json }));
}

await main();
