/**
 * The disk mapper's decisions with recorded commands (the real cryptsetup, device-mapper and
 * mounts are exercised by the node image's VM test, tools/image/src/vm/state-disk-check.ts):
 * which disks are formatted, which stay locked, and that a wrong key maps nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import { CryptsetupError, type CryptsetupRun } from './cryptsetup.js';
import { DiskMapperError, StateDiskMapper, type MapperCommands } from './disk-mapper.js';

interface Disk {
  luks: boolean;
  token?: Record<string, unknown>;
  key?: Buffer;
  mapped?: boolean;
  /** `systemctl start` waits for this before it returns (containerd's start-up). */
  serviceStart?: Promise<void>;
  /** `systemctl is-active` says the unit is not active. */
  serviceFails?: boolean;
}

/** Records every command; answers cryptsetup like a disk in the given condition. */
function recorder(disk: Disk) {
  const calls: string[] = [];
  const cmd: MapperCommands = {
    async cryptsetup(run: CryptsetupRun) {
      const [verb] = run.args;
      calls.push(`cryptsetup ${run.args.filter((a) => a !== '--batch-mode').join(' ')}`);
      if (verb === 'isLuks' && !disk.luks) throw new CryptsetupError('CRYPTSETUP_FAILED', 'not LUKS', { details: { exitCode: 1 } });
      if (verb === 'token' && run.args[1] === 'export') {
        if (!disk.token) throw new CryptsetupError('CRYPTSETUP_FAILED', 'no token', { details: { exitCode: 1 } });
        return JSON.stringify(disk.token);
      }
      if (verb === 'open' && disk.key && !Buffer.from(run.stdin as Uint8Array).equals(disk.key)) throw new CryptsetupError('WRONG_PASSPHRASE', 'no key', { details: { exitCode: 2 } });
      if (verb === 'luksUUID') return '0f1e2d3c-0000-4000-8000-000000000000\n';
      return '';
    },
    async run(binary, args) {
      calls.push(`${binary} ${args.join(' ')}`);
      if (binary === 'mountpoint') throw new Error('not a mount point');
      if (binary === 'systemctl' && args[0] === 'start') await disk.serviceStart;
      if (binary === 'systemctl' && args[0] === 'is-active' && disk.serviceFails) throw new Error('inactive');
      if (binary === 'dmsetup') return 'state: 0 8 crypt aes-xts-plain64 :96:logon:cryptsetup:x 0 253:0 0 1 integrity:32:aead\nstate_dif: 0 8 integrity 254:16 0 32 J 1 internal_hash:hmac(sha256):32\n';
      return '';
    },
    exists: async (path) => path === '/dev/vdb' || (path === '/dev/mapper/state' && disk.mapped === true),
  };
  return { calls, cmd };
}

describe('StateDiskMapper', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'disk-mapper-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const mapper = (cmd: MapperCommands) =>
    new StateDiskMapper(
      { device: '/dev/vdb', initialKeyPath: join(dir, 'keys', 'state.key'), mappingName: 'state', mountPoint: join(dir, 'state'), binds: [join(dir, 'var/lib/containerd')], services: ['containerd.service'], deviceTimeoutMs: 200 },
      createNopLogger(),
      cmd,
    );

  it('formats a blank disk with LUKS2 + hmac-sha256 integrity under a new random key, opens, makes ext4, mounts, binds and starts containerd', async () => {
    const { calls, cmd } = recorder({ luks: false });
    const m = mapper(cmd);
    assert.equal(await m.prepare(), 'formatted');
    await m.servicesReady();
    const key = readFileSync(join(dir, 'keys', 'state.key'));
    assert.equal(key.length, 32);
    assert.equal(statSync(join(dir, 'keys', 'state.key')).mode & 0o777, 0o600);
    const verbs = calls.map((c) => c.split(' ').slice(0, 2).join(' '));
    assert.deepEqual(verbs.slice(0, 11), ['cryptsetup isLuks', 'cryptsetup luksFormat', 'cryptsetup token', 'cryptsetup open', 'mkfs.ext4 -q', 'mountpoint -q', 'mount -t', 'mountpoint -q', 'mount --bind', 'dmsetup table', 'systemctl start']);
    // containerd's check and the UUID read run side by side (the start is not awaited after a format).
    assert.deepEqual(verbs.slice(11).sort(), ['cryptsetup luksUUID', 'systemctl is-active']);
    assert.match(calls[1]!, /--type luks2 .*--integrity hmac-sha256 --key-file=- \/dev\/vdb$/);
    assert.match(calls[6]!, new RegExp(`mount -t ext4 /dev/mapper/state ${join(dir, 'state')}$`));
    assert.match(calls[8]!, new RegExp(`mount --bind ${join(dir, 'state', dir, 'var/lib/containerd')} ${join(dir, 'var/lib/containerd')}$`));
    for (const c of calls) assert.ok(!c.includes(key.toString('hex')) && !c.includes(key.toString('base64')), 'the key never appears in arguments');
  });

  it('after a format, returns while containerd starts; servicesReady waits for it and fails when it is not active', async () => {
    let started!: () => void;
    const disk: Disk = { luks: false, serviceStart: new Promise<void>((r) => (started = r)) };
    const { calls, cmd } = recorder(disk);
    const m = mapper(cmd);
    assert.equal(await m.prepare(), 'formatted');
    assert.ok(!calls.includes('systemctl is-active --quiet containerd.service'), 'prepare() did not wait for containerd');
    let ready = false;
    const waiting = m.servicesReady().then(() => (ready = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(ready, false, 'servicesReady() waits for the start');
    started();
    await waiting;
    assert.ok(calls.includes('systemctl is-active --quiet containerd.service'));

    const failing = recorder({ luks: false, serviceFails: true });
    const f = mapper(failing.cmd);
    assert.equal(await f.prepare(), 'formatted');
    await assert.rejects(f.servicesReady(), (err: unknown) => err instanceof DiskMapperError && err.code === 'STATE_DISK_SETUP_FAILED');
  });

  it('waits for containerd when it mounts an unlocked disk (a rejoin starts the kubelet right after)', async () => {
    const { cmd } = recorder({ luks: true, key: Buffer.alloc(32, 7), serviceFails: true });
    await assert.rejects(mapper(cmd).unlock(Buffer.alloc(32, 7)), (err: unknown) => err instanceof DiskMapperError && err.code === 'STATE_DISK_SETUP_FAILED');
  });

  it('keeps a disk that belongs to a cluster locked: no format, no mapping', async () => {
    const { calls, cmd } = recorder({ luks: true, token: { type: 'constellation-state-disk', keyslots: [], diskIsInitialized: true } });
    assert.equal(await mapper(cmd).prepare(), 'locked');
    assert.deepEqual(calls, ['cryptsetup isLuks /dev/vdb', 'cryptsetup token export --token-id 0 /dev/vdb']);
  });

  it('keeps a LUKS disk without a readable token locked (only an explicit reset mark allows a new format)', async () => {
    const { calls, cmd } = recorder({ luks: true });
    assert.equal(await mapper(cmd).prepare(), 'locked');
    assert.ok(!calls.some((c) => c.includes('luksFormat')));
  });

  it('formats a disk a failed bootstrap marked for reset', async () => {
    const { calls, cmd } = recorder({ luks: true, token: { type: 'constellation-state-disk', keyslots: [], diskIsInitialized: false } });
    assert.equal(await mapper(cmd).prepare(), 'formatted');
    assert.ok(calls.some((c) => c.startsWith('cryptsetup luksFormat')));
  });

  it('mounts an already open mapping (the bootstrapper restarted in this boot) without formatting', async () => {
    const { calls, cmd } = recorder({ luks: true, mapped: true });
    assert.equal(await mapper(cmd).prepare(), 'open');
    assert.ok(!calls.some((c) => c.startsWith('cryptsetup')));
    assert.ok(calls.some((c) => c.startsWith('mount -t ext4')));
  });

  it('checks a delivered key against the header first: a wrong key maps and mounts nothing', async () => {
    const disk = { luks: true, key: Buffer.alloc(32, 7) };
    const { calls, cmd } = recorder(disk);
    await assert.rejects(mapper(cmd).unlock(Buffer.alloc(32, 8)), (err: unknown) => err instanceof CryptsetupError && err.code === 'WRONG_PASSPHRASE');
    assert.deepEqual(calls, ['cryptsetup open --test-passphrase --key-file=- /dev/vdb']);
    calls.length = 0;
    await mapper(cmd).unlock(Buffer.alloc(32, 7));
    assert.deepEqual(calls.slice(0, 2), ['cryptsetup open --test-passphrase --key-file=- /dev/vdb', 'cryptsetup open --type luks2 --key-file=- /dev/vdb state']);
    assert.ok(calls.some((c) => c.startsWith('mount -t ext4 /dev/mapper/state')));
  });

  it('fails with STATE_DISK_MISSING when the device never appears', async () => {
    const { cmd } = recorder({ luks: false });
    await assert.rejects(mapper({ ...cmd, exists: async () => false }).prepare(), /no state disk \/dev\/vdb/);
  });
});
