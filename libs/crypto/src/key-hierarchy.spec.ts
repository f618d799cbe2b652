import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { CryptoError } from './errors.js';
import { ClusterKms, dataKeyInfo, deriveClusterId, stateDiskKeyId } from './key-hierarchy.js';
import { encodeClusterKmsUri, parseKmsUri } from './kms-uri.js';

/** docs/protocol/key-hierarchy.md worked example: master key 32×00, master salt 32×01, measurement salt 32×02. */
const example = {
  master: { key: Buffer.alloc(32, 0x00), salt: Buffer.alloc(32, 0x01) },
  measurementSalt: Buffer.alloc(32, 0x02),
  kmsUri:
    'kms://cluster-kms?key=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=&salt=AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=',
  measurementSecret: 'c5adf4439499bbcd0ecd3af0048cac23680fd31e21050d5bdb7861be8b7e8d32',
  clusterId: 'fdb2f1753774fc73773199fc65f3df9c803176ccb88c9851ba73a3de276cddc8',
  diskKeyZeroUuid: 'cafa93353ca216e2a84aa958f9126808bcfff0f6c32187710fb583caa1c70b64',
  sshCaSeed: '3dcce96e5c53e7f1696aca1cd27ed294d0f545b6384abf5fe6fc1ed53980268c',
};

/** HKDF-SHA256 by OpenSSL's own implementation (`openssl kdf ... HKDF`), independent of ours. */
function opensslHkdf(key: Buffer, salt: Buffer, info: string): string {
  const args = ['kdf', '-keylen', '32', '-kdfopt', 'digest:SHA256', '-kdfopt', `hexkey:${key.toString('hex')}`, '-kdfopt', `hexsalt:${salt.toString('hex')}`, '-kdfopt', `info:${info}`, 'HKDF'];
  const r = spawnSync('openssl', args, { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().replaceAll(':', '').toLowerCase();
}
const opensslKdf = spawnSync('openssl', ['kdf', '-help']).status === 0 ? false : missingComponent('openssl 3 (kdf command)', 'apt-get install -y openssl');

describe('key hierarchy: the worked example agrees with OpenSSL\'s HKDF', { skip: opensslKdf }, () => {
  it('measurement secret, cluster ID, disk key and SSH CA seed', () => {
    const { key, salt } = example.master;
    assert.equal(opensslHkdf(key, salt, 'key-measurementSecret'), example.measurementSecret);
    assert.equal(opensslHkdf(Buffer.from(example.measurementSecret, 'hex'), example.measurementSalt, 'key-clusterID'), example.clusterId);
    assert.equal(opensslHkdf(key, salt, 'key-00000000-0000-0000-0000-000000000000'), example.diskKeyZeroUuid);
    assert.equal(opensslHkdf(key, salt, 'key-ca_emergency_ssh'), example.sshCaSeed);
  });
});

describe('key hierarchy: docs/protocol/key-hierarchy.md worked example', () => {
  const kms = new ClusterKms(example.master);

  it('encodes the kms URI', () => {
    assert.equal(encodeClusterKmsUri(example.master), example.kmsUri);
  });

  it('derives the measurement secret', () => {
    assert.equal(kms.getDek(dataKeyInfo('measurementSecret'), 32).toString('hex'), example.measurementSecret);
  });

  it('derives the cluster ID from measurement secret and salt', () => {
    const secret = kms.getDek('key-measurementSecret', 32);
    assert.equal(deriveClusterId(secret, example.measurementSalt).toString('hex'), example.clusterId);
  });

  it('derives the disk key for the all-zero UUID (upper-case input is lower-cased)', () => {
    const uuid = '00000000-0000-0000-0000-000000000000';
    assert.equal(kms.getDek(stateDiskKeyId(uuid), 32).toString('hex'), example.diskKeyZeroUuid);
    assert.equal(kms.getDek(dataKeyInfo(uuid), 32).toString('hex'), example.diskKeyZeroUuid);
  });

  it('derives the emergency SSH CA seed', () => {
    assert.equal(kms.getDek(dataKeyInfo('ca_emergency_ssh'), 32).toString('hex'), example.sshCaSeed);
  });

  it('round-trips through the URI the CLI sends', () => {
    const parsed = parseKmsUri(example.kmsUri);
    assert.equal(parsed.type, 'cluster-kms');
    if (parsed.type !== 'cluster-kms') return;
    const viaUri = new ClusterKms(parsed.masterSecret);
    assert.equal(viaUri.getDek('key-measurementSecret', 32).toString('hex'), example.measurementSecret);
  });
});

describe('ClusterKms', () => {
  it('ids are case-sensitive (TestClusterKMS)', () => {
    const kms = new ClusterKms({ key: Buffer.alloc(32, 0xff), salt: Buffer.alloc(32, 0xff) });
    const lower = kms.getDek('key-ffffffff-ffff-ffff-ffff-ffffffffffff', 32);
    assert.equal(lower.toString('hex'), '1484aa39d3415e906e07940ff215d8b1eee705d3027dba93306af4abff4f70be');
    assert.notDeepEqual(kms.getDek('key-FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', 32), lower);
    assert.deepEqual(kms.getDek(stateDiskKeyId('FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'), 32), lower);
  });

  it('refuses an empty key or salt', () => {
    for (const master of [
      { key: Buffer.alloc(0), salt: Buffer.alloc(32) },
      { key: Buffer.alloc(32), salt: Buffer.alloc(0) },
    ]) {
      assert.throws(() => new ClusterKms(master), (e: unknown) => e instanceof CryptoError && e.code === 'SECRET_EMPTY');
    }
  });

  it('never shows key material when inspected or serialised', () => {
    const kms = new ClusterKms({ key: Buffer.from('supersecretmasterkey'), salt: Buffer.from('saltsaltsalt') });
    assert.ok(!inspect(kms).includes('supersecret'));
    assert.equal(JSON.stringify({ kms }), '{"kms":"[REDACTED]"}');
  });
});
