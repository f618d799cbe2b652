import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError } from '@asterism/service-runtime';
import { parseFlags } from './flags.js';
import { jitteredDelay } from './monitor-loop.js';
import { parseMode } from './inputs.js';

describe('attestation-monitor flags', () => {
  it('defaults: 60 s interval, 20 % jitter, 180 s grace, NodePort 30081, identity from POD_NAME', () => {
    const c = parseFlags(['--variant=qemu-vtpm'], { POD_NAME: 'pod-a' })!;
    assert.deepEqual([c.intervalMs, c.jitter, c.graceMs, c.verifyPort, c.identity, c.clusterId], [60_000, 0.2, 180_000, 30081, 'pod-a', undefined]);
  });

  const bad: Array<[string, string[]]> = [
    ['no variant', []],
    ['unknown variant', ['--variant=nope']],
    ['interval below 5 s', ['--variant=dummy', '--interval=1']],
    ['jitter above 50 %', ['--variant=dummy', '--jitter=80']],
    ['short cluster ID', ['--variant=dummy', '--cluster-id=abcd']],
    ['unknown flag', ['--variant=dummy', '--nope=1']],
  ];
  for (const [name, argv] of bad) it(`refuses ${name}`, () => assert.throws(() => parseFlags(argv, {}), FlagError));

  it('accepts a cluster ID as hex or base64', () => {
    const id = Buffer.alloc(32, 9);
    assert.deepEqual(parseFlags(['--variant=dummy', `--cluster-id=${id.toString('hex')}`], {})!.clusterId, id);
    assert.deepEqual(parseFlags(['--variant=dummy', `--cluster-id=${id.toString('base64')}`], {})!.clusterId, id);
  });

  it('jitter spreads the interval uniformly within ±jitter', () => {
    assert.equal(jitteredDelay(60_000, 0.2, () => 0), 48_000);
    assert.equal(jitteredDelay(60_000, 0.2, () => 0.5), 60_000);
    assert.equal(jitteredDelay(60_000, 0.2, () => 1), 72_000);
  });

  it('the mode is enforce unless join-config says warn; anything else is refused', () => {
    assert.deepEqual([parseMode(undefined), parseMode(''), parseMode('enforce'), parseMode('warn')], ['enforce', 'enforce', 'enforce', 'warn']);
    assert.throws(() => parseMode('off'), /want enforce or warn/);
  });
});
