import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BootstrapToken, BootstrapTokenSecretOptions } from './bootstrap-token.js';
import { SharedBootstrapTokens, type BootstrapTokenCreator } from './shared-bootstrap-token.js';

const TTL = 15 * 60_000;
const WINDOW = 60_000;

/** Records every creation; tokens are numbered. */
class RecordingIssuer implements BootstrapTokenCreator {
  readonly calls: BootstrapTokenSecretOptions[] = [];
  failNext = false;
  async create(options: BootstrapTokenSecretOptions): Promise<BootstrapToken> {
    this.calls.push(options);
    await new Promise((r) => setImmediate(r));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('apiserver unavailable');
    }
    return { id: `tok${String(this.calls.length).padStart(3, '0')}`, secret: 'x'.repeat(16) };
  }
}

function setup() {
  let now = Date.parse('2026-11-23T08:00:00.250Z');
  const issuer = new RecordingIssuer();
  const pool = new SharedBootstrapTokens(issuer, { windowMs: WINDOW, now: () => now });
  return { issuer, pool, advance: (ms: number) => (now += ms) };
}

describe('SharedBootstrapTokens', () => {
  const sequences: Array<[string, number[], string[]]> = [
    ['joins within one window share the token', [0, 1_000, 58_000], ['tok001', 'tok001', 'tok001']],
    ['a join after the window gets a new token', [0, 60_000], ['tok001', 'tok002']],
    ['each window has its own token', [0, 30_000, 40_000, 30_000], ['tok001', 'tok001', 'tok002', 'tok002']],
  ];
  for (const [name, gaps, expected] of sequences) {
    it(name, async () => {
      const { pool, advance } = setup();
      const got: string[] = [];
      for (const gap of gaps) {
        advance(gap);
        got.push((await pool.create({ ttlMs: TTL })).id);
      }
      assert.deepEqual(got, expected);
    });
  }

  it('creates tokens valid for ttl + window, so every join still gets at least ttl', async () => {
    const { issuer, pool } = setup();
    await pool.create({ ttlMs: TTL });
    assert.equal(issuer.calls[0]!.ttlMs, TTL + WINDOW);
    assert.equal(issuer.calls[0]!.now?.toISOString(), '2026-11-23T08:00:00.250Z');
  });

  it('a caller that needs a longer validity than the token has left gets a new one', async () => {
    const { pool, advance } = setup();
    await pool.create({ ttlMs: TTL });
    advance(30_000);
    assert.equal((await pool.create({ ttlMs: TTL + 45_000 })).id, 'tok002');
  });

  it('concurrent joins wait for one creation', async () => {
    const { issuer, pool } = setup();
    const ids = await Promise.all(Array.from({ length: 8 }, () => pool.create({ ttlMs: TTL })));
    assert.deepEqual(new Set(ids.map((t) => t.id)), new Set(['tok001']));
    assert.equal(issuer.calls.length, 1);
  });

  it('a failed creation fails that join and the next join tries again', async () => {
    const { issuer, pool } = setup();
    issuer.failNext = true;
    await assert.rejects(pool.create({ ttlMs: TTL }), /apiserver unavailable/);
    assert.equal((await pool.create({ ttlMs: TTL })).id, 'tok002');
  });

  it('tokens with other groups are not shared', async () => {
    const { pool } = setup();
    await pool.create({ ttlMs: TTL });
    assert.equal((await pool.create({ ttlMs: TTL, groups: ['system:bootstrappers:other'] })).id, 'tok002');
  });

  it('rejects a non-positive window', () => {
    assert.throws(() => new SharedBootstrapTokens(new RecordingIssuer(), { windowMs: 0 }), RangeError);
  });
});
