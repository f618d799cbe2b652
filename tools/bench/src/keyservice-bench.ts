// Keyservice throughput: the TypeScript keyservice, run from its esbuild bundle with the image's
// Node flags, against a grpc-go server doing the same HKDF-SHA256 derivation (tools/bench/go), both
// loaded by the SAME Go load generator (`keybench load`) in one run.
//
//   npx tsx tools/bench/src/keyservice-bench.ts
//     env: ROUNDS=5 DURATION=4s WARMUP=1s CONNS=16 INFLIGHT=1 TS_WORKERS=1,2
//          TS_NODE_FLAGS='...' (instead of the image's flags, APP_NODE_FLAGS; for tuning)
//
// Every round loads each target once (order alternates per round, so drift hits all alike) and
// records calls/s, latency p50/p99 (from the load generator), server CPU microseconds per call and
// the peak summed RSS of the server's process tree during the measured window. The load checks
// every answer against the expected key, so both servers provably derive the same bytes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { APP_NODE_FLAGS, bundleApp, REPO_ROOT } from '@asterism/deploy';
import { buildGoBinary } from '@asterism/interop';
import { treeCpuMs, treeRssBytes } from './proc-stats.js';
import { median, ratio } from './stats.js';

/** All-zero master secret and 0x01 salt: the all-zero disk UUID then derives this key (docs/protocol). */
const EXPECTED_KEY = 'cafa93353ca216e2a84aa958f9126808bcfff0f6c32187710fb583caa1c70b64';
const KEY_ID = '00000000-0000-0000-0000-000000000000';

interface Target {
  name: string;
  child: ChildProcess;
  address: string;
}

interface Sample {
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerCall: number;
  peakRssMB: number;
}

/** Resolves with the first parsed line `match` accepts; rejects when the process exits first. */
function waitForLine<T>(child: ChildProcess, stream: 'stdout' | 'stderr', match: (line: string) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child[stream]! }).on('line', (line) => {
      const found = match(line);
      if (found !== undefined) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`process exited with ${code} before it was ready`)));
  });
}

async function startGo(bin: string, files: { secret: string; salt: string }): Promise<Target> {
  const child = spawn(bin, ['server', '-listen', '127.0.0.1:0', '-master-secret', files.secret, '-salt', files.salt], { stdio: ['ignore', 'pipe', 'inherit'] });
  const address = await waitForLine(child, 'stdout', (l) => /^LISTENING (\S+)$/.exec(l)?.[1]);
  return { name: 'go', child, address };
}

async function startTs(bundle: string, workers: number, files: { secret: string; salt: string }): Promise<Target> {
  const nodeFlags = process.env.TS_NODE_FLAGS !== undefined ? process.env.TS_NODE_FLAGS.split(' ').filter(Boolean) : APP_NODE_FLAGS.keyservice;
  const args = [...nodeFlags, bundle, '--host=127.0.0.1', '--port=0', '--metrics-port=0', `--master-secret=${files.secret}`, `--salt=${files.salt}`, `--workers=${workers}`];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await waitForLine(child, 'stderr', (l) => {
    if (!l.startsWith('{')) return undefined;
    const rec = JSON.parse(l) as { msg?: string; port?: number };
    return rec.msg === 'keyservice serving' ? rec.port : undefined;
  });
  // Drain the log so a full pipe never blocks the service.
  child.stderr!.resume();
  return { name: `ts-${workers}w`, child, address: `127.0.0.1:${port}` };
}

/** One load run against a target; samples the target's CPU and RSS around the measured window. */
async function loadOnce(bin: string, target: Target, env: Record<string, string>): Promise<Sample> {
  const load = spawn(bin, ['load', '-addr', target.address, '-conns', env.CONNS!, '-inflight', env.INFLIGHT!, '-warmup', env.WARMUP!, '-duration', env.DURATION!, '-id', KEY_ID, '-expect', EXPECTED_KEY], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = target.child.pid!;
  let cpuStart = 0;
  let cpuEnd = 0;
  let peakRss = 0;
  let timer: NodeJS.Timeout | undefined;
  const result = await waitForLine(load, 'stdout', (l) => {
    const ev = JSON.parse(l) as { event: string; calls: number; errors: number; callsPerSec: number; p50Ms: number; p99Ms: number; mismatch: boolean; firstError?: string };
    if (ev.event === 'start') {
      cpuStart = treeCpuMs(pid);
      timer = setInterval(() => (peakRss = Math.max(peakRss, treeRssBytes(pid))), 100);
    } else if (ev.event === 'end') {
      cpuEnd = treeCpuMs(pid);
      clearInterval(timer);
    } else if (ev.event === 'result') return ev;
    return undefined;
  });
  if (result.errors > 0 || result.mismatch) throw new Error(`${target.name}: ${result.errors} errors (${result.firstError ?? ''}), mismatch=${result.mismatch}`);
  return {
    callsPerSec: result.callsPerSec,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    cpuUsPerCall: ((cpuEnd - cpuStart) * 1000) / result.calls,
    peakRssMB: peakRss / 1024 / 1024,
  };
}

async function main(): Promise<void> {
  const env = {
    ROUNDS: process.env.ROUNDS ?? '5',
    DURATION: process.env.DURATION ?? '4s',
    WARMUP: process.env.WARMUP ?? '1s',
    CONNS: process.env.CONNS ?? '16',
    INFLIGHT: process.env.INFLIGHT ?? '1',
    TS_WORKERS: process.env.TS_WORKERS ?? '1,2',
  };
  const dir = mkdtempSync(join(tmpdir(), 'keyservice-bench-'));
  const files = { secret: join(dir, 'mastersecret'), salt: join(dir, 'salt') };
  writeFileSync(files.secret, Buffer.alloc(32, 0x00));
  writeFileSync(files.salt, Buffer.alloc(32, 0x01));
  const bin = await buildGoBinary(join(REPO_ROOT, 'tools', 'bench', 'go'), 'keybench');
  const { outfile } = await bundleApp('keyservice', { outRoot: join(dir, 'dist') });
  const targets: Target[] = [];
  try {
    targets.push(await startGo(bin, files));
    for (const w of env.TS_WORKERS.split(',')) targets.push(await startTs(outfile, Number(w), files));
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
    for (let r = 0; r < Number(env.ROUNDS); r++) {
      const order = r % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) samples.get(t.name)!.push(await loadOnce(bin, t, env));
    }
    const med = (name: string, k: keyof Sample) => median(samples.get(name)!.map((s) => s[k]));
    console.log(`keyservice GetDataKey, ${env.CONNS} connections x ${env.INFLIGHT} in flight, ${env.ROUNDS} rounds of ${env.DURATION}, ${cpus().length} CPUs, Node ${process.version}`);
    console.table(
      targets.map((t) => ({
        server: t.name,
        'calls/s (median)': med(t.name, 'callsPerSec').toFixed(0),
        'p50 ms': med(t.name, 'p50Ms').toFixed(2),
        'p99 ms': med(t.name, 'p99Ms').toFixed(2),
        'server CPU us/call': med(t.name, 'cpuUsPerCall').toFixed(1),
        'peak RSS MB (tree)': Math.max(...samples.get(t.name)!.map((s) => s.peakRssMB)).toFixed(1),
        'throughput vs go': ratio(med(t.name, 'callsPerSec'), med('go', 'callsPerSec')),
      })),
    );
    console.log(JSON.stringify({ bench: 'keyservice', env, samples: Object.fromEntries(samples) }));
  } finally {
    for (const t of targets) t.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
