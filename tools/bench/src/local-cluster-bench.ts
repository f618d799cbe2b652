// Join latency and idle memory of the local cluster (backend local, 1 control plane + WORKERS
// workers) as `local-cluster up` brings it up: this checkout's, and with BASELINE=<git ref> the
// local cluster of that ref too (its own `up`, bootstrapper and services; runs alternate).
//
//   flock /tmp/asterism-cluster.lock npx tsx tools/bench/src/local-cluster-bench.ts
//     env: RUNS=3 WORKERS=4 SETTLE_S=20 SAMPLES=5 BASELINE=<git ref>
//
// Join latency per worker, from its logs (issue 21: "joinservice reachable -> Node registered"):
// from the node-0 joinservice's "joinservice serving" line to the worker's "node registered" line
// (the local backend's join ends with the Node object), and from the worker's own "joinservice
// reachable" (its readiness probe saw the joinservice) to the same line. Idle memory: SETTLE_S
// after `up` returned, SAMPLES samples 1 s apart of RSS and PSS summed over every process of every
// node's sessions (tools/local-cluster processes.ts); the median sample. Then `down`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binDir, testenvUnavailable } from '@asterism/k8s-testenv';
import { memorySummary, sessionProcesses, type ClusterState } from '@asterism/local-cluster';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { baselineCheckout } from './baseline.js';
import { loadAverage, median, quantile, ratio } from './stats.js';

interface Target {
  name: 'current' | 'baseline';
  root: string;
}

interface RunResult {
  upMs: number;
  /** Per worker: joinservice serving -> node registered, and its own "reachable" -> node registered (ms). */
  fromServing: number[];
  fromReachable: number[];
  /** Per worker, ms: reachable -> ticket received, the disk re-key step, and the Kubernetes join (discovery + registration). */
  stages: { ticket: number[]; rekey: number[]; kubernetes: number[] };
  memory: ReturnType<typeof memorySummary>;
}

/** The target's local-cluster CLI; rejects with its output on a non-zero exit. */
function localCluster(t: Target, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(t.root, 'tools/local-cluster/src/main.ts'), ...args], { cwd: t.root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`local-cluster ${args[0]} (${t.name}) exited with ${code}:\n${out.split('\n').slice(-15).join('\n')}`));
    });
  });
}

/** The first JSON log line of `file` whose msg is `msg` (and that `also` accepts). */
function logLine(file: string, msg: string, also: (rec: Record<string, unknown>) => boolean = () => true): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes(`"${msg}"`)) continue;
    try {
      const rec = JSON.parse(line) as Record<string, unknown>;
      if (rec.msg === msg && also(rec)) return rec;
    } catch {
      /* not a JSON line */
    }
  }
  return undefined;
}

/** `time` (ms since epoch) of that line. */
function logTime(file: string, msg: string): number | undefined {
  const rec = logLine(file, msg);
  return typeof rec?.time === 'string' ? Date.parse(rec.time) : undefined;
}

/** Join latencies of every worker of the cluster in `dir` (both versions write the same logs). */
function joinLatencies(dir: string, workers: number): Pick<RunResult, 'fromServing' | 'fromReachable' | 'stages'> {
  const serving = logTime(join(dir, 'nodes/control-plane-0/root/var/lib/asterism/services/logs/joinservice.log'), 'joinservice serving');
  if (serving === undefined) throw new Error(`no "joinservice serving" line in ${dir}`);
  const fromServing: number[] = [];
  const fromReachable: number[] = [];
  const stages: RunResult['stages'] = { ticket: [], rekey: [], kubernetes: [] };
  for (let i = 0; i < workers; i++) {
    const log = join(dir, `nodes/worker-${i}/bootstrapper.json.log`);
    const registered = logTime(log, 'node registered');
    const reachable = logTime(log, 'joinservice reachable');
    if (registered === undefined) throw new Error(`worker-${i}: no "node registered" line in ${log}`);
    fromServing.push(registered - serving);
    if (reachable !== undefined) fromReachable.push(registered - reachable);
    const ticket = logTime(log, 'received join ticket');
    if (reachable !== undefined && ticket !== undefined) stages.ticket.push(ticket - reachable);
    const rekey = logLine(log, 'join step finished', (r) => r.step === 'updating disk passphrase')?.durationMs;
    if (typeof rekey === 'number') stages.rekey.push(rekey);
    const k8s = logLine(log, 'joined the cluster')?.durationMs;
    if (typeof k8s === 'number') stages.kubernetes.push(k8s);
  }
  return { fromServing, fromReachable, stages };
}

/** The median (by RSS) of `samples` memory samples of every process the cluster's nodes started. */
async function idleMemory(dir: string, samples: number): Promise<RunResult['memory']> {
  const state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
  const sessions = state.nodes.flatMap((n) => [n.bootstrapper, n.swtpm]);
  const taken: Array<RunResult['memory']> = [];
  for (let i = 0; i < samples; i++) {
    taken.push(memorySummary(sessionProcesses(sessions)));
    await new Promise((r) => setTimeout(r, 1000));
  }
  return taken.sort((a, b) => a.rssBytes - b.rssBytes)[Math.floor(taken.length / 2)]!;
}

async function runOnce(t: Target, env: { WORKERS: number; SETTLE_S: number; SAMPLES: number }): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), `lc-bench-${t.name}-`));
  try {
    const t0 = performance.now();
    await localCluster(t, ['up', '--backend', 'local', '--workers', String(env.WORKERS), '--dir', dir, '--bin-dir', binDir()]);
    const upMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, env.SETTLE_S * 1000));
    return { upMs, ...joinLatencies(dir, env.WORKERS), memory: await idleMemory(dir, env.SAMPLES) };
  } finally {
    await localCluster(t, ['down', '--dir', dir]).catch((err: unknown) => console.error(String(err)));
    rmSync(dir, { recursive: true, force: true });
  }
}

const mib = (b: number) => Math.round(b / 2 ** 20);

function summary(runs: RunResult[]) {
  const lat = (xs: number[]) => ({ n: xs.length, p50: Math.round(median(xs)), p99: Math.round(quantile(xs, 0.99)), max: Math.max(...xs) });
  const mem = runs.map((r) => r.memory).sort((a, b) => a.rssBytes - b.rssBytes)[Math.floor(runs.length / 2)]!;
  return {
    upS: Number((median(runs.map((r) => r.upMs)) / 1000).toFixed(1)),
    joinFromServingMs: lat(runs.flatMap((r) => r.fromServing)),
    joinFromReachableMs: lat(runs.flatMap((r) => r.fromReachable)),
    stagesP50Ms: Object.fromEntries((['ticket', 'rekey', 'kubernetes'] as const).map((k) => [k, Math.round(median(runs.flatMap((r) => r.stages[k])))])),
    idleRssMiB: mib(median(runs.map((r) => r.memory.rssBytes))),
    idlePssMiB: mib(median(runs.map((r) => r.memory.pssBytes))),
    byKind: Object.fromEntries(Object.entries(mem.byKind).map(([k, v]) => [k, `${v.count} x ${mib(v.rssBytes / v.count)} MiB`])),
  };
}

async function main(): Promise<void> {
  const unavailable = testenvUnavailable();
  if (unavailable) throw new Error(unavailable);
  const env = { RUNS: Number(process.env.RUNS ?? 3), WORKERS: Number(process.env.WORKERS ?? 4), SETTLE_S: Number(process.env.SETTLE_S ?? 20), SAMPLES: Number(process.env.SAMPLES ?? 5), BASELINE: process.env.BASELINE };
  const baselineRoot = env.BASELINE ? baselineCheckout(env.BASELINE) : undefined;
  const targets: Target[] = [{ name: 'current', root: WORKSPACE_ROOT }, ...(baselineRoot ? [{ name: 'baseline' as const, root: baselineRoot }] : [])];
  const loadBefore = loadAverage();
  const results = new Map<string, RunResult[]>(targets.map((t) => [t.name, []]));
  try {
    for (let r = 0; r < env.RUNS; r++) {
      for (const t of r % 2 === 0 ? [...targets].reverse() : targets) {
        results.get(t.name)!.push(await runOnce(t, env));
        console.error(`[local-cluster-bench] run ${r + 1}/${env.RUNS} ${t.name} done (${loadAverage()})`);
      }
    }
  } finally {
    if (baselineRoot) rmSync(baselineRoot, { recursive: true, force: true });
  }
  const out = Object.fromEntries(targets.map((t) => [t.name, summary(results.get(t.name)!)]));
  console.log(`local cluster (backend local, 1 + ${env.WORKERS} workers), ${env.RUNS} runs per target; before: ${loadBefore}; after: ${loadAverage()}`);
  console.table(Object.entries(out).map(([name, s]) => ({ target: name, 'up s': s.upS, 'join p50 ms': s.joinFromServingMs.p50, 'join p99 ms': s.joinFromServingMs.p99, 'join max ms': s.joinFromServingMs.max, joins: s.joinFromServingMs.n, 'from reachable p99 ms': s.joinFromReachableMs.p99, 'idle RSS MiB': s.idleRssMiB, 'idle PSS MiB': s.idlePssMiB })));
  for (const [name, s] of Object.entries(out)) console.log(`${name}: join stages p50 ${JSON.stringify(s.stagesP50Ms)}; processes ${JSON.stringify(s.byKind)}`);
  if (out.baseline && out.current) console.log(`idle RSS current / baseline: ${ratio(out.current.idleRssMiB, out.baseline.idleRssMiB)}, PSS: ${ratio(out.current.idlePssMiB, out.baseline.idlePssMiB)}`);
  console.log(JSON.stringify({ bench: 'local-cluster', env, load: { before: loadBefore, after: loadAverage() }, results: out, runs: Object.fromEntries(results) }));
}

await main();
