/**
 * A join storm: J simulated nodes start joining at the same instant against one or more
 * joinservice replicas of a join-bench world (join-bench-env.ts: real kube-apiserver, keyservice,
 * swtpm vTPMs, each node from its own loopback address with strict identity binding). Each node
 * does what a joining node's join client does once a joinservice is reachable: a new aTLS channel
 * per attempt (TPM quote as exporter evidence), one IssueJoinTicket with a fresh disk UUID, and
 * after a failed attempt the node's jittered exponential backoff (full jitter, 200 ms base, 2 s
 * cap, 50 ms floor, as apps/bootstrapper/src/joinclient/backoff.ts). Attempts go to the replicas
 * round robin, as a Service spreads connections. Bounded: J nodes, each until `deadlineMs`.
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { QemuVtpmIssuer } from '@asterism/attestation';
import { atlsCallError, atlsChannelCredentials, ATLS_CLIENT_CHANNEL_OPTIONS } from '@asterism/atls';
import { join as joinApi } from '@asterism/proto';
import type { BenchNode, JoinBenchEnv, JoinTarget } from './join-bench-env.js';
import { cpuMs, processTree } from './proc-stats.js';
import { median, quantile } from './stats.js';

/** Options of {@link runStorm}. */
export interface StormOptions {
  joiners: number;
  /** Every node gives up after this long (a node would go on; the storm is bounded). */
  deadlineMs: number;
  /** Per-call deadline of one attempt. Default 30 s. */
  callDeadlineMs?: number;
}

/** What one storm measured. */
export interface StormResult {
  joiners: number;
  replicas: number;
  joined: number;
  /** Wall time until the last node joined (or gave up). */
  wallMs: number;
  /** Per joined node: start of the storm -> its ticket. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** max / p50: about 2 when all start together and are served in turn; a starved node shows as much more. */
  maxOverP50: number;
  /** Failed attempts in all (each followed by a backoff), the most of one node, and by reason. */
  retries: number;
  maxRetriesOfOneNode: number;
  retryReasons: Record<string, number>;
  joinsPerSec: number;
  /** CPU ms per join of each process (all joinservice replicas summed). */
  cpuMsPerJoin: Record<string, number>;
}

/** Full-jitter backoff of the node's join client (see module comment). */
function backoffMs(attempt: number): number {
  return Math.max(50, Math.floor(Math.random() * Math.min(2_000, 200 * 2 ** Math.min(attempt, 30))));
}

function attempt(target: JoinTarget, issuer: QemuVtpmIssuer, node: BenchNode, diskUuid: string, env: JoinBenchEnv, deadlineMs: number): Promise<void> {
  const credentials = atlsChannelCredentials({ issuer, localAddress: node.address });
  const client = new joinApi.APIClient(target.endpoint, credentials, ATLS_CLIENT_CHANNEL_OPTIONS);
  const req: joinApi.IssueJoinTicketRequest = { diskUuid, certificateRequest: node.csr, isControlPlane: false, hostPublicKey: env.hostKey, hostCertificatePrincipals: [node.address] };
  return new Promise<void>((resolve, reject) => {
    client.issueJoinTicket(req, new grpc.Metadata(), { deadline: new Date(Date.now() + deadlineMs) }, (err) => (client.close(), err ? reject(err) : resolve()));
  });
}

/** The reason of a failed attempt: the aTLS/join reason code when there is one, else the gRPC status name. */
function reasonOf(err: unknown): string {
  const e = err as grpc.ServiceError;
  const typed = atlsCallError(e);
  if (typed) return typed.code;
  const reason = e.metadata?.get('x-asterism-reason')?.[0] ?? e.metadata?.get('x-atls-reason')?.[0];
  return reason ? String(reason) : (grpc.status[e.code] ?? 'UNKNOWN');
}

function cpuOf(env: JoinBenchEnv, targets: JoinTarget[]): Record<string, number> {
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
    joinservice: targets.reduce((n, t) => n + cpuMs(t.pid), 0),
    keyservice: cpuMs(env.pids.keyservice),
    apiserver: cpuMs(env.pids.apiserver),
    etcd: cpuMs(env.pids.etcd),
    controllerManager: cpuMs(env.pids.controllerManager),
    swtpm,
    nodes: (self.user + self.system) / 1000,
  };
}

/** Runs one storm: `o.joiners` nodes (from `env.nodes`, in order) against `targets`, all starting at once. */
export async function runStorm(env: JoinBenchEnv, targets: JoinTarget[], o: StormOptions): Promise<StormResult> {
  if (o.joiners > env.nodes.length) throw new Error(`a storm of ${o.joiners} needs as many nodes; the world has ${env.nodes.length}`);
  const latencies: number[] = [];
  const retryReasons: Record<string, number> = {};
  let retries = 0;
  let maxRetries = 0;
  let next = 0;
  const cpu0 = cpuOf(env, targets);
  const t0 = performance.now();
  await Promise.all(
    env.nodes.slice(0, o.joiners).map(async (node, i) => {
      const issuer = env.issuers[i % env.issuers.length]!;
      // One disk per node and storm: a retry asks for the same disk, as a node does.
      const diskUuid = crypto.randomUUID();
      for (let n = 0; performance.now() - t0 < o.deadlineMs; n++) {
        try {
          await attempt(targets[next++ % targets.length]!, issuer, node, diskUuid, env, o.callDeadlineMs ?? 30_000);
          latencies.push(performance.now() - t0);
          maxRetries = Math.max(maxRetries, n);
          return;
        } catch (err) {
          retries++;
          const reason = reasonOf(err);
          retryReasons[reason] = (retryReasons[reason] ?? 0) + 1;
          await new Promise((r) => setTimeout(r, backoffMs(n)));
        }
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = cpuOf(env, targets);
  const joined = latencies.length;
  const p50 = median(latencies);
  return {
    joiners: o.joiners,
    replicas: targets.length,
    joined,
    wallMs,
    p50Ms: p50,
    p99Ms: quantile(latencies, 0.99),
    maxMs: Math.max(...latencies),
    maxOverP50: Math.max(...latencies) / p50,
    retries,
    maxRetriesOfOneNode: maxRetries,
    retryReasons,
    joinsPerSec: joined / (wallMs / 1000),
    cpuMsPerJoin: Object.fromEntries(Object.keys(cpu0).map((k) => [k, joined ? (cpu1[k]! - cpu0[k]!) / joined : NaN])),
  };
}
