import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { peerHost, PeerRateLimiter } from './peer-rate-limiter.js';

describe('PeerRateLimiter', () => {
  it('allows a burst per host, then refills over time', () => {
    let now = 0;
    const l = new PeerRateLimiter(1, 3, 100, () => now);
    assert.deepEqual([1, 2, 3, 4].map(() => l.take('10.0.0.1:1000')), [true, true, true, false]);
    assert.equal(l.take('10.0.0.1:2000'), false, 'same host, other port shares the bucket');
    assert.equal(l.take('10.0.0.2:1000'), true, 'other hosts are independent');
    now = 1500;
    assert.equal(l.take('10.0.0.1:1000'), true);
    assert.equal(l.take('10.0.0.1:1000'), false);
  });

  it('keeps at most maxPeers buckets', () => {
    const l = new PeerRateLimiter(1, 1, 10);
    for (let i = 0; i < 1000; i++) l.take(`10.0.${i >> 8}.${i & 255}:1`);
    assert.equal(l.size, 10);
  });

  it('refunds a token and says when the next one comes', () => {
    const now = 0;
    const l = new PeerRateLimiter(0.5, 2, 100, () => now);
    assert.equal(l.take('10.0.0.1:1'), true);
    assert.equal(l.take('10.0.0.1:1'), true);
    assert.equal(l.take('10.0.0.1:1'), false);
    assert.equal(l.retryAfterSeconds('10.0.0.1:1'), 2);
    l.refund('10.0.0.1:9');
    assert.equal(l.retryAfterSeconds('10.0.0.1:1'), 0);
    assert.equal(l.take('10.0.0.1:1'), true);
    assert.equal(l.retryAfterSeconds('10.0.0.9:1'), 0, 'unknown peers have tokens');
  });

  it('is disabled with a zero rate', () => {
    const l = new PeerRateLimiter(0, 0);
    for (let i = 0; i < 100; i++) assert.equal(l.take('a:1'), true);
  });

  for (const [peer, host] of [
    ['1.2.3.4:5', '1.2.3.4'],
    ['[::1]:5', '::1'],
    ['unknown', 'unknown'],
  ]) {
    it(`peerHost(${peer}) = ${host}`, () => assert.equal(peerHost(peer!), host));
  }
});
