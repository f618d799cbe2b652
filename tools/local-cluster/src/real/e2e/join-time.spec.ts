import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { joinStages, joinTimeReport, kubeletReadyAt, kubeletStartedAt, percentile, readyMoment } from './join-time.js';

const T = Date.parse('2026-11-25T21:07:50.707Z');

describe('real-node join time', () => {
  it('splits reachable -> Ready into the stages between the known milestones', () => {
    assert.deepEqual(joinStages({ reachable: T, ticket: T + 129, kubeadm: T + 431, kubeletStart: T + 1601, ready: T + 2384 }), [
      ['ticket', 129],
      ['lock, files, disk re-key', 302],
      ['kubeadm until kubelet start', 1170],
      ['kubelet start to Ready', 783],
    ]);
    assert.deepEqual(joinStages({ reachable: T, ticket: T + 100, ready: T + 900 }), [
      ['ticket', 100],
      ['kubelet start to Ready', 800],
    ]);
  });

  const percentiles: Array<[string, number[], number, number]> = [
    ['p50 of an odd count is the middle', [3, 1, 2], 50, 2],
    ['p50 of an even count is the lower middle (nearest rank)', [4, 1, 3, 2], 50, 2],
    ['p100 is the maximum', [4, 1, 3, 2], 100, 4],
    ['p99 of few values is the maximum', [1, 2, 3, 4, 5], 99, 5],
  ];
  for (const [name, values, p, want] of percentiles) it(name, () => assert.equal(percentile(values, p), want));

  it("finds node.sh's first kubelet start at or after the reachable moment (UTC times of that day)", () => {
    const log = ['21:07:47.146 node.sh[w]: starting containerd', '21:07:40.000 node.sh[w]: starting the kubelet', '21:07:52.308 node.sh[w]: starting the kubelet', '21:07:59.000 node.sh[w]: starting the kubelet'].join('\n');
    assert.equal(kubeletStartedAt(log, T), Date.parse('2026-11-25T21:07:52.308Z'));
    assert.equal(kubeletStartedAt('21:07:40.000 node.sh[w]: starting the kubelet', T), undefined);
  });

  it("reads the kubelet's ready transition (klog, local time) and checks it against lastTransitionTime", () => {
    const local = new Date(T + 2384);
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    const klog = `I${pad(local.getMonth() + 1)}${pad(local.getDate())} ${pad(local.getHours())}:${pad(local.getMinutes())}:${pad(local.getSeconds())}.${pad(local.getMilliseconds(), 3)}258    2866 kubelet_node_status.go:439] "Fast updating node status as it just became ready"`;
    const at = kubeletReadyAt(`I1125 00:00:00.000000 1 x.go:1] "Starting kubelet main sync loop"\n${klog}\n`, T);
    assert.equal(at, T + 2384);
    const second = Math.floor((T + 2384) / 1000) * 1000;
    assert.equal(readyMoment(second, at), T + 2384, 'agrees with the condition: the precise moment');
    assert.equal(readyMoment(second - 5000, at), second - 5000 + 999, 'disagrees: the end of the condition\'s second');
    assert.equal(readyMoment(second, undefined), second + 999);
  });

  it('reports every node and p50/max per role over the joins a fault did not hold', () => {
    const lines = joinTimeReport([
      { node: 'control-plane-1', role: 'control plane', totalMs: 25_000, stages: [] },
      { node: 'worker-0', role: 'worker', totalMs: 2000, stages: [['ticket', 500]] },
      { node: 'worker-1', role: 'worker', totalMs: 3000, stages: [] },
      { node: 'worker-late', role: 'worker', excluded: 'held by the keyservice outage', totalMs: 30_000, stages: [] },
      { node: 'worker-late2', role: 'worker', totalMs: 1500, stages: [] },
    ]);
    assert.equal(lines[1], 'worker-0 (worker): 2.0 s = ticket 0.5');
    assert.equal(lines[3], 'worker-late (worker; excluded: held by the keyservice outage): 30.0 s = ');
    assert.deepEqual(lines.slice(5), [
      'join time, worker (joinservice reachable -> Node Ready): p50 2.0 s, max 3.0 s over 3 joins',
      'join time, control plane (joinservice reachable -> Node Ready): p50 25.0 s, max 25.0 s over 1 joins',
    ]);
  });
});
