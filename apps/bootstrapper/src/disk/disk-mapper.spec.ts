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
  /** luksFormat waits for this (a format still running). */
  formatGate?: Promise<void>;
  /** mkfs.ext4 fails. */
  mkfsFails?: boolean;
}

/** What `mkfs.ext4 -n` prints for a 1 GiB device (e2fsprogs 1.47, Debian 12). */
const DRY_RUN = 'Creating filesystem with 262144 4k blocks and 65536 inodes\nFilesystem UUID: 0b0c0d0e-0000-4000-8000-000000000000\nSuperblock backups stored on blocks: \n\t32768, 98304, 163840, 229376\n\n';

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
      if (verb === 'luksFormat') await disk.formatGate;
      if (verb === 'luksUUID') return '0f1e2d3c-0000-4000-8000-000000000000\n';
      return '';
    },
    async run(binary, args) {
      calls.push(`${binary} ${args.join(' ')}`);
      if (binary === 'mountpoint') throw new Error('not a mount point');
      if (binary === 'systemctl' && args[0] === 'start') await disk.serviceStart;
      if (binary === 'systemctl' && args[0] === 'is-active' && disk.serviceFails) throw new Error('inactive');
      if (binary === 'blockdev') return '1073741824\n';
      if (binary === 'mkfs.ext4' && args[0] === '-n') return DRY_RUN;
      if (binary === 'mkfs.ext4' && disk.mkfsFails) throw new DiskMapperError('STATE_DISK_SETUP_FAILED', 'mkfs.ext4 -q failed (exit 1): no space');
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
    const zeroing = calls.filter((c) => c.startsWith('dd '));
    const rest = verbs.filter((v) => v !== 'dd if=/dev/zero');
    assert.deepEqual(rest.slice(0, 13), ['cryptsetup isLuks', 'cryptsetup luksFormat', 'cryptsetup token', 'cryptsetup open', 'blockdev --getsize64', 'mkfs.ext4 -n', 'mkfs.ext4 -q', 'mountpoint -q', 'mount -t', 'mountpoint -q', 'mount --bind', 'dmsetup table', 'systemctl start']);
    // containerd's check and the UUID read run side by side (the start is not awaited after a format).
    assert.deepEqual(rest.slice(13).sort(), ['cryptsetup luksUUID', 'systemctl is-active']);
    assert.match(calls[1]!, /--type luks2 .*--integrity hmac-sha256 --integrity-no-wipe --sector-size 4096 --key-file=- \/dev\/vdb$/);
    // The edges before the dry run, then the superblock groups' heads it names, all before the real mkfs.
    const mkfs = calls.findIndex((c) => c.startsWith('mkfs.ext4 -q'));
    assert.ok(calls.findIndex((c) => c.startsWith('dd ')) < calls.findIndex((c) => c.startsWith('mkfs.ext4 -n')));
    assert.ok(calls.findLastIndex((c) => c.startsWith('dd ')) < mkfs);
    for (const backup of [32768, 98304, 163840, 229376]) assert.ok(zeroing.some((c) => c.includes(`seek=${backup * 4096} count=${1026 * 4096} `)), `the head of the group at block ${backup} is zeroed`);
    assert.ok(zeroing.every((c) => c.includes('of=/dev/mapper/state') && c.includes('oflag=seek_bytes,direct') && c.includes('iflag=count_bytes')), 'zeros go through the mapping (valid tags), not to the raw disk');
    assert.equal(calls[mkfs], 'mkfs.ext4 -q -L state -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/state');
    assert.equal(calls.find((c) => c.startsWith('mkfs.ext4 -n')), 'mkfs.ext4 -n -L state -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/state', 'the dry run has the real run\'s options');
    assert.match(calls.find((c) => c.startsWith('mount -t'))!, new RegExp(`mount -t ext4 /dev/mapper/state ${join(dir, 'state')}$`));
    assert.match(calls.find((c) => c.startsWith('mount --bind'))!, new RegExp(`mount --bind ${join(dir, 'state', dir, 'var/lib/containerd')} ${join(dir, 'var/lib/containerd')}$`));
    for (const c of calls) assert.ok(!c.includes(key.toString('hex')) && !c.includes(key.toString('base64')), 'the key never appears in arguments');
  });

  it('returns while a fresh disk is formatted (the node serves init meanwhile); diskReady waits for the format', async () => {
    let formatDone!: () => void;
    const { calls, cmd } = recorder({ luks: false, formatGate: new Promise<void>((r) => (formatDone = r)) });
    const m = mapper(cmd);
    assert.equal(await m.prepare(), 'formatted');
    let ready = false;
    const waiting = m.diskReady().then(() => (ready = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(ready, false, 'diskReady() waits for the format');
    assert.ok(!calls.some((c) => c.startsWith('mkfs.ext4')), 'the format is still at luksFormat');
    formatDone();
    await waiting;
    assert.ok(calls.some((c) => c.startsWith('mkfs.ext4 -q')) && calls.some((c) => c.startsWith('mount -t ext4')));
    await m.servicesReady();
  });

  it('a failed background format rejects diskReady and servicesReady with its error', async () => {
    const { cmd } = recorder({ luks: false, mkfsFails: true });
    const m = mapper(cmd);
    assert.equal(await m.prepare(), 'formatted');
    const failed = (err: unknown) => err instanceof DiskMapperError && err.code === 'STATE_DISK_SETUP_FAILED' && /mkfs/.test(err.message);
    await assert.rejects(m.diskReady(), failed);
    await assert.rejects(m.servicesReady(), failed);
  });

  it('after a format, containerd starts in the background; servicesReady waits for it and fails when it is not active', async () => {
    let started!: () => void;
    const disk: Disk = { luks: false, serviceStart: new Promise<void>((r) => (started = r)) };
    const { calls, cmd } = recorder(disk);
    const m = mapper(cmd);
    assert.equal(await m.prepare(), 'formatted');
    await m.diskReady();
    assert.ok(!calls.includes('systemctl is-active --quiet containerd.service'), 'the format did not wait for containerd');
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
    const m = mapper(cmd);
    assert.equal(await m.prepare(), 'formatted');
    await m.servicesReady();
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
