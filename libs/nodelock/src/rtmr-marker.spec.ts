import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { NodeLock } from './node-lock.js';
import { isRtmrNodeBootstrapped, RtmrNodeMarker, SysfsRtmrDevice, type RtmrDevice } from './rtmr-marker.js';

/** docs/protocol/key-hierarchy.md example cluster ID. */
const CLUSTER_ID = Buffer.from('fdb2f1753774fc73773199fc65f3df9c803176ccb88c9851ba73a3de276cddc8', 'hex');
const sha384 = (b: Buffer) => createHash('sha384').update(b).digest();
const MARKED_RTMR2 = sha384(Buffer.concat([Buffer.alloc(48), sha384(CLUSTER_ID)]));

/** A TD's RTMRs in memory with the TDX extend semantics. */
class FakeTd implements RtmrDevice {
  readonly rtmrs = [0, 1, 2, 3].map(() => Buffer.alloc(48));
  extends = 0;
  async extend(index: number, digest: Buffer): Promise<void> {
    this.extends++;
    this.rtmrs[index] = sha384(Buffer.concat([this.rtmrs[index]!, digest]));
  }
  async read(index: number): Promise<Buffer> {
    return Buffer.from(this.rtmrs[index]!);
  }
  reboot(): void {
    this.rtmrs.forEach((r) => r.fill(0));
  }
}

/** SHA-384 by `openssl dgst`, outside our code and node:crypto's calling convention. */
function opensslSha384(data: Buffer): Buffer {
  const r = spawnSync('openssl', ['dgst', '-sha384', '-binary'], { input: data });
  assert.equal(r.status, 0, r.stderr?.toString());
  return r.stdout;
}
const noOpenssl = spawnSync('openssl', ['version']).status === 0 ? false : missingComponent('openssl', 'apt-get install -y openssl');

describe('RTMR2 marker value, computed independently', { skip: noOpenssl }, () => {
  it('the TDX extend of the example cluster ID (RTMR2 = SHA-384(48 zero bytes || SHA-384(clusterID))) matches what the marker writes', () => {
    const extended = opensslSha384(Buffer.concat([Buffer.alloc(48), opensslSha384(CLUSTER_ID)]));
    assert.equal(extended.toString('hex'), MARKED_RTMR2.toString('hex'));
  });
});

describe('RtmrNodeMarker', () => {
  it('1,000 concurrent tryLockOnce calls: one winner, the TD opened once, RTMR2 = SHA384(0 || SHA384(clusterID)); a reboot resets it', async () => {
    const td = new FakeTd();
    let opened = 0;
    const lock = new NodeLock(new RtmrNodeMarker(async () => (opened++, td)));
    assert.equal(await isRtmrNodeBootstrapped(td), false);
    const results = await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i % 5));
        return lock.tryLockOnce(CLUSTER_ID, i % 2 ? 'join' : 'init');
      }),
    );
    assert.equal(results.filter((r) => r === 'acquired').length, 1);
    assert.equal(opened, 1);
    assert.equal(td.extends, 1);
    assert.deepEqual(td.rtmrs[2], MARKED_RTMR2);
    assert.ok(td.rtmrs[0]!.every((b) => b === 0) && td.rtmrs[3]!.every((b) => b === 0), 'other RTMRs untouched');
    assert.equal(await isRtmrNodeBootstrapped(td), true);
    td.reboot();
    assert.equal(await isRtmrNodeBootstrapped(td), false);
  });

  it('a failing device keeps the lock and reports MARK_FAILED', async () => {
    const lock = new NodeLock(new RtmrNodeMarker(async () => Promise.reject(new Error('no /sys/class/misc/tdx_guest'))));
    await assert.rejects(lock.tryLockOnce(CLUSTER_ID), (err: { code?: string }) => err.code === 'MARK_FAILED');
    assert.equal(await lock.tryLockOnce(CLUSTER_ID), 'already-locked');
  });
});

describe('SysfsRtmrDevice against a fake tdx_guest measurements directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-tdx-guest-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const i of [0, 1, 2, 3]) writeFileSync(join(dir, `rtmr${i}:sha384`), Buffer.alloc(48));

  it('marking writes exactly SHA384(clusterID) (48 bytes) to rtmr2:sha384 and nothing else', async () => {
    await new RtmrNodeMarker(async () => new SysfsRtmrDevice(dir)).markNodeAsBootstrapped(CLUSTER_ID);
    assert.deepEqual(readFileSync(join(dir, 'rtmr2:sha384')), sha384(CLUSTER_ID));
    assert.deepEqual(readFileSync(join(dir, 'rtmr3:sha384')), Buffer.alloc(48));
  });

  it('1,000 concurrent tryLockOnce calls through the sysfs device: one winner, exactly one 48-byte write of SHA384(clusterID)', async () => {
    writeFileSync(join(dir, 'rtmr2:sha384'), Buffer.alloc(48));
    const sysfs = new SysfsRtmrDevice(dir);
    const writes: Buffer[] = [];
    const counting: RtmrDevice = { extend: async (i, d) => (writes.push(d), sysfs.extend(i, d)), read: (i) => sysfs.read(i) };
    const lock = new NodeLock(new RtmrNodeMarker(async () => counting));
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => lock.tryLockOnce(CLUSTER_ID, i % 2 ? 'join' : 'init')));
    assert.equal(results.filter((r) => r === 'acquired').length, 1);
    assert.deepEqual(writes, [sha384(CLUSTER_ID)]);
    assert.deepEqual(readFileSync(join(dir, 'rtmr2:sha384')), sha384(CLUSTER_ID));
  });

  it('reads: zero = not bootstrapped, non-zero = bootstrapped; wrong length, bad index and a missing device are errors', async () => {
    const dev = new SysfsRtmrDevice(dir);
    writeFileSync(join(dir, 'rtmr2:sha384'), Buffer.alloc(48));
    assert.equal(await isRtmrNodeBootstrapped(dev), false);
    writeFileSync(join(dir, 'rtmr2:sha384'), MARKED_RTMR2);
    assert.equal(await isRtmrNodeBootstrapped(dev), true);
    writeFileSync(join(dir, 'rtmr2:sha384'), Buffer.alloc(47));
    await assert.rejects(isRtmrNodeBootstrapped(dev), /47 bytes, not 48/);
    await assert.rejects(dev.read(4), /not 0\.\.3/);
    await assert.rejects(dev.extend(2, Buffer.alloc(32)), /32 bytes, not 48/);
    await assert.rejects(new SysfsRtmrDevice(join(dir, 'missing')).read(2), /ENOENT/);
  });
});
