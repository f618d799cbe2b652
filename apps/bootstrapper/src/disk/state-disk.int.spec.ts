/** Integration: the real cryptsetup on LUKS2 image files (no device-mapper needed). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { missingComponent } from '@asterism/testing';
import { CryptsetupError } from './cryptsetup.js';
import { CryptsetupStateDisk, formatStateDisk, STATE_DISK_PBKDF_PRESETS } from './state-disk.js';

const skip = spawnSync('cryptsetup', ['--version']).status === 0 ? false : missingComponent('cryptsetup', 'apt-get install cryptsetup-bin');
const dir = mkdtempSync(join(tmpdir(), 'state-disk-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
  // cryptsetup may create /dev/mapper/control even though it cannot map anything here.
});

async function freshDisk(name: string, pbkdf: ConstructorParameters<typeof CryptsetupStateDisk>[2] = { pbkdf: 'pbkdf2', iterations: 1000 }) {
  const image = join(dir, `${name}.img`);
  writeFileSync(image, '');
  truncateSync(image, 32 * 1024 * 1024);
  const initial = randomBytes(32);
  const keyPath = join(dir, `${name}.key`);
  writeFileSync(keyPath, initial, { mode: 0o600 });
  await formatStateDisk(image, initial);
  return { image, initial, disk: new CryptsetupStateDisk(image, keyPath, pbkdf) };
}

describe('CryptsetupStateDisk on an image file', { skip }, () => {
  it('reports a lower-case UUID', async () => {
    const { disk } = await freshDisk('uuid');
    assert.match(await disk.uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('replaces the initial passphrase with the derived key and marks the disk initialized', async () => {
    const { disk, initial } = await freshDisk('rekey');
    const derived = randomBytes(32);
    assert.equal(await disk.testPassphrase(initial), true);
    await disk.updatePassphrase(derived);
    assert.equal(await disk.testPassphrase(derived), true);
    assert.equal(await disk.testPassphrase(initial), false, 'the initial passphrase no longer opens the disk');
    assert.deepEqual(await disk.token(), { type: 'constellation-state-disk', keyslots: [], diskIsInitialized: true });
    await disk.markForReset();
    assert.deepEqual(await disk.token(), { type: 'constellation-state-disk', keyslots: [], diskIsInitialized: false });
  });

  it('the light preset writes an argon2id keyslot with 8 MiB, 4 passes and 1 lane that the derived key opens', async () => {
    const { image, disk } = await freshDisk('light', STATE_DISK_PBKDF_PRESETS.light);
    const derived = randomBytes(32);
    await disk.updatePassphrase(derived);
    const slot = (JSON.parse(spawnSync('cryptsetup', ['luksDump', '--dump-json-metadata', image]).stdout.toString()) as { keyslots: Record<string, { kdf: Record<string, unknown> }> }).keyslots['0']!.kdf;
    assert.deepEqual({ type: slot.type, time: slot.time, memory: slot.memory, cpus: slot.cpus }, { type: 'argon2id', time: 4, memory: 8192, cpus: 1 });
    assert.equal(await disk.testPassphrase(derived), true);
  });

  it('fails with a clear error when the initial key file is missing (TestUpdatePassphrase)', async () => {
    const { image } = await freshDisk('nokey');
    const disk = new CryptsetupStateDisk(image, join(dir, 'missing.key'));
    await assert.rejects(disk.updatePassphrase(randomBytes(32)), (e: unknown) => e instanceof CryptsetupError && /reading initial passphrase/.test(e.message));
  });

  it('fails with WRONG_PASSPHRASE when the initial key does not match (keyslot change error)', async () => {
    const { image } = await freshDisk('wrong');
    const badKey = join(dir, 'bad.key');
    writeFileSync(badKey, randomBytes(32));
    const disk = new CryptsetupStateDisk(image, badKey, { pbkdf: 'pbkdf2', iterations: 1000 });
    await assert.rejects(disk.updatePassphrase(randomBytes(32)), (e: unknown) => e instanceof CryptsetupError && e.code === 'WRONG_PASSPHRASE');
  });

  it('fails on a file that is not LUKS', async () => {
    const plain = join(dir, 'plain.img');
    writeFileSync(plain, Buffer.alloc(1024 * 1024));
    await assert.rejects(new CryptsetupStateDisk(plain, plain).uuid(), (e: unknown) => e instanceof CryptsetupError && e.code === 'CRYPTSETUP_FAILED');
  });
});
