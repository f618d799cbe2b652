// The full join storm (join-storm.ts; CI runs 60 nodes in join-storm.int.spec.ts): JOINERS
// simulated nodes start at once against one and against two joinservice replicas (strict identity
// binding, default attestation budget) of one world: real kube-apiserver, keyservice, swtpm pool,
// every node from its own loopback address. Rounds alternate the replica count. Per storm: joined,
// p50/p99/max join time from the storm's start, max/p50 (fairness), failed attempts (retries) by
// reason, joins/s and CPU ms per join of every process (the replicas summed).
//
//   npx tsx tools/bench/src/join-storm-bench.ts
//     env: JOINERS=300 ROUNDS=2 TPMS=8 DEADLINE_S=300
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { startJoinBenchEnv } from './join-bench-env.js';
import { runStorm, type StormResult } from './join-storm.js';
import { loadAverage, median } from './stats.js';

async function main(): Promise<void> {
  const unavailable = testenvUnavailable();
  if (unavailable) throw new Error(unavailable);
  const env = { JOINERS: Number(process.env.JOINERS ?? 300), ROUNDS: Number(process.env.ROUNDS ?? 2), TPMS: Number(process.env.TPMS ?? 8), DEADLINE_S: Number(process.env.DEADLINE_S ?? 300) };
  const loadBefore = loadAverage();
  const world = await startJoinBenchEnv({ tpms: env.TPMS, runtime: 'bundle', joinserviceNodeArgs: [], identityBindings: ['strict'], nodes: env.JOINERS, replicas: 2 });
  const results = new Map<number, StormResult[]>([
    [1, []],
    [2, []],
  ]);
  try {
    // Warm-up (JIT, the bootstrap token of the window, caches) on both replicas; not recorded.
    await runStorm(world, world.targets, { joiners: 32, deadlineMs: env.DEADLINE_S * 1000 });
    for (let r = 0; r < env.ROUNDS; r++) {
      for (const replicas of r % 2 === 0 ? [1, 2] : [2, 1]) {
        // Fresh nodes per storm would need fresh addresses; the same nodes join again with new disks.
        const res = await runStorm(world, world.targets.slice(0, replicas), { joiners: env.JOINERS, deadlineMs: env.DEADLINE_S * 1000 });
        results.get(replicas)!.push(res);
        console.error(`[join-storm] round ${r + 1}, ${replicas} replica(s): ${res.joined}/${res.joiners} joined, p50 ${res.p50Ms.toFixed(0)} ms, max ${res.maxMs.toFixed(0)} ms, retries ${res.retries}`);
      }
    }
  } finally {
    await world.stop();
  }
  const load = { before: loadBefore, after: loadAverage() };
  console.log(`join storm: ${env.JOINERS} nodes at once, ${env.ROUNDS} rounds, ${env.TPMS} swtpm, strict identity binding, default attestation budget; medians over rounds`);
  console.log(`before: ${load.before}; after: ${load.after}`);
  const rows = [...results].map(([replicas, rs]) => ({
    replicas,
    joined: rs.map((x) => `${x.joined}/${x.joiners}`).join(' '),
    'joins/s': median(rs.map((x) => x.joinsPerSec)).toFixed(1),
    'p50 ms': median(rs.map((x) => x.p50Ms)).toFixed(0),
    'p99 ms': median(rs.map((x) => x.p99Ms)).toFixed(0),
    'max ms': median(rs.map((x) => x.maxMs)).toFixed(0),
    'max/p50': median(rs.map((x) => x.maxOverP50)).toFixed(2),
    retries: rs.map((x) => x.retries).join(' '),
    ...Object.fromEntries(Object.keys(rs[0]!.cpuMsPerJoin).map((k) => [`${k} ms`, median(rs.map((x) => x.cpuMsPerJoin[k]!)).toFixed(2)])),
  }));
  console.table(rows);
  console.log(JSON.stringify({ bench: 'join-storm', env, load, results: Object.fromEntries(results) }));
}

await main();
