/**
 * The join storm in reduced size (the full 300 runs as tools/bench/src/join-storm-bench.ts): 60
 * simulated nodes start at the same instant against one joinservice process (strict identity
 * binding, the global attestation budget at its defaults), with a real kube-apiserver, keyservice
 * and swtpm vTPMs, all on the loopback. Every node must join; failed attempts are counted (each is
 * followed by the node's backoff) and bounded, and no node may wait far beyond the median.
 * Bounded: 60 nodes, 120 s.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { missingComponent } from '@asterism/testing';
import { swtpmAvailable, SWTPM_INSTALL_HINT } from '@asterism/tpm/testing';
import { startJoinBenchEnv, type JoinBenchEnv } from './join-bench-env.js';
import { runStorm } from './join-storm.js';

const skip = testenvUnavailable() || (swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT));
const JOINERS = 60;

describe('join storm (reduced: 60 nodes at once, one joinservice)', { skip }, () => {
  let env: JoinBenchEnv;
  before(async () => {
    env = await startJoinBenchEnv({ tpms: 8, runtime: 'bundle', joinserviceNodeArgs: [], identityBindings: ['strict'], nodes: JOINERS });
  });
  after(async () => {
    await env?.stop();
  });

  it('every node joins, retries stay bounded and no node is starved', async () => {
    const r = await runStorm(env, env.targets, { joiners: JOINERS, deadlineMs: 120_000 });
    console.log(JSON.stringify({ storm: r }));
    assert.equal(r.joined, JOINERS, `joined ${r.joined}/${JOINERS}; failed attempts by reason: ${JSON.stringify(r.retryReasons)}`);
    assert.ok(r.retries <= JOINERS, `no retry storm: ${r.retries} failed attempts for ${JOINERS} nodes (${JSON.stringify(r.retryReasons)})`);
    // Served in turn, the last node waits about twice the median; a starved one much longer.
    assert.ok(r.maxMs <= 3 * r.p50Ms + 2_000, `fairness: max ${r.maxMs.toFixed(0)} ms vs p50 ${r.p50Ms.toFixed(0)} ms`);
  });
});
