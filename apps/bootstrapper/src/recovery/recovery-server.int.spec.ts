/**
 * Integration: the recovery server over real aTLS against a real LUKS2 image (cryptsetup) and a
 * real node lock (PCR 15 of a swtpm), racing a rejoin client that never gets a ticket (no
 * joinservice is up: a full control-plane outage). docs/protocol/recovery.md.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { atlsChannelCredentials, atlsServerCredentials } from '@asterism/atls';
import { ClusterKms, dataKeyInfo, deriveClusterId, encodeClusterKmsUri, MEASUREMENT_SECRET_KEY_ID, NO_STORE_URI, stateDiskKeyId, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import { CLUSTER_ID_PCR, NodeLock, TpmNodeMarker } from '@asterism/nodelock';
import { recoverproto } from '@asterism/proto';
import { findSecretLeaks, missingComponent } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { CryptsetupStateDisk, formatStateDisk } from '../disk/state-disk.js';
import { RecoveryServer } from './recovery-server.js';
import { raceForDiskKey } from './unlock-race.js';

const missing = [spawnSync('cryptsetup', ['--version']).status === 0 ? '' : 'cryptsetup', swtpmAvailable() ? '' : 'swtpm'].filter(Boolean);
const skip = missing.length ? missingComponent(missing.join(', '), `apt-get install cryptsetup-bin; ${SWTPM_INSTALL_HINT}`) : false;
const logger = createNopLogger();

/** A rejoin client in a full outage: no joinservice answers, it waits until stopped. */
function stalledRejoin() {
  let stop!: () => void;
  const stopped = new Promise<'stopped'>((r) => (stop = () => r('stopped')));
  return { run: () => stopped, stop: () => stop() };
}

function recoverCall(port: number, req: recoverproto.RecoverMessage): Promise<grpc.ServiceError | null> {
  const client = new recoverproto.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ validators: [new DummyValidator()] }));
  return new Promise((resolve) => client.recover(req, (err) => {
    client.close();
    resolve(err);
  }));
}

describe('recovery server on a real LUKS2 disk and a real TPM lock', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'recovery-'));
  let tpm: Swtpm;
  const master = { key: randomBytes(32), salt: randomBytes(32) };
  const wrong = { key: randomBytes(32), salt: master.salt };
  const measurementSalt = randomBytes(32);
  let disk: CryptsetupStateDisk;
  let diskKey: Buffer;

  before(async () => {
    tpm = await startSwtpm();
    const image = join(dir, 'state.img');
    writeFileSync(image, '');
    truncateSync(image, 32 * 1024 * 1024);
    const initial = randomBytes(32);
    writeFileSync(join(dir, 'initial.key'), initial, { mode: 0o600 });
    await formatStateDisk(image, initial);
    disk = new CryptsetupStateDisk(image, join(dir, 'initial.key'), { pbkdf: 'pbkdf2', iterations: 1000 });
    // The state after the node's first init: the disk holds the key derived from the master secret.
    diskKey = new ClusterKms(master).getDek(stateDiskKeyId(await disk.uuid()), STATE_DISK_KEY_LENGTH);
    await disk.updatePassphrase(diskKey);
  });
  after(async () => {
    await tpm?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a wrong master secret and a malformed URI without touching anything, then recovers with the right one', async () => {
    await tpm.reboot();
    const server = new RecoveryServer(disk, logger);
    const port = await server.listen('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer(), logger }));
    const lock = new NodeLock(new TpmNodeMarker(() => tpm.client()));
    const rejoin = stalledRejoin();
    const race = raceForDiskKey({ rejoin, recovery: server, lock, openState: async () => measurementSalt, logger });
    const pcr15 = async () => (await (await tpm.client()).pcrRead([CLUSTER_ID_PCR], TPM_ALG.SHA256)).get(CLUSTER_ID_PCR)!.toString('hex');
    const headerBefore = await disk.token();

    const cases: Array<[string, recoverproto.RecoverMessage, grpc.status, RegExp]> = [
      ['wrong master secret', { kmsUri: encodeClusterKmsUri(wrong), storageUri: NO_STORE_URI }, grpc.status.PERMISSION_DENIED, /does not open the node's state disk .*nothing was changed/],
      ['malformed kms URI', { kmsUri: 'kms://cluster-kms?key=%%%', storageUri: NO_STORE_URI }, grpc.status.INVALID_ARGUMENT, /creating kms client/],
      ['unsupported storage', { kmsUri: encodeClusterKmsUri(master), storageUri: 'storage://aws?bucket=b&region=r&accessKeyID=a&accessKey=k' }, grpc.status.INVALID_ARGUMENT, /storage backend aws is not supported/],
    ];
    for (const [name, req, code, message] of cases) {
      const err = await recoverCall(port, req);
      assert.equal(err?.code, code, `${name}: ${err?.message}`);
      assert.match(err!.details, message, name);
      assert.deepEqual(findSecretLeaks(err!.details, [{ name: 'wrong key', value: wrong.key }, { name: 'master key', value: master.key }]), [], name);
    }
    assert.equal(await pcr15(), '00'.repeat(32), 'nothing marked after the refusals');
    assert.deepEqual(await disk.token(), headerBefore, 'LUKS token unchanged');
    assert.equal(await disk.testPassphrase(diskKey), true, 'the disk key still opens the disk');

    assert.equal(await recoverCall(port, { kmsUri: encodeClusterKmsUri(master), storageUri: NO_STORE_URI }), null);
    const result = await race;
    const measurementSecret = new ClusterKms(master).getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32);
    const clusterId = deriveClusterId(measurementSecret, measurementSalt);
    assert.deepEqual(result, { by: 'recovery', clusterId });
    assert.equal(await pcr15(), createHash('sha256').update(Buffer.alloc(32)).update(createHash('sha256').update(clusterId).digest()).digest('hex'), 'PCR 15 re-marked with the cluster ID');
    assert.equal(await disk.testPassphrase(diskKey), true, 'disk key unchanged');

    const again = await recoverCall(port, { kmsUri: encodeClusterKmsUri(master), storageUri: NO_STORE_URI });
    assert.equal(again?.code, grpc.status.FAILED_PRECONDITION);
    assert.match(again!.details, /not waiting for recovery/);
    await server.close();
  });

  it('when the rejoin wins, the recovery server refuses later calls as not waiting', async () => {
    await tpm.reboot();
    const server = new RecoveryServer(disk, logger);
    const port = await server.listen('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer(), logger }));
    const id = randomBytes(32);
    const result = await raceForDiskKey({ rejoin: { run: async () => id, stop: () => undefined }, recovery: server, lock: new NodeLock(new TpmNodeMarker(() => tpm.client())), openState: async () => measurementSalt, logger });
    assert.deepEqual(result, { by: 'rejoin', clusterId: id });
    const err = await recoverCall(port, { kmsUri: encodeClusterKmsUri(master), storageUri: NO_STORE_URI });
    assert.equal(err?.code, grpc.status.FAILED_PRECONDITION);
    await server.close();
  });

  it('a client that does not accept the node\'s attestation never sends the secret', async () => {
    const server = new RecoveryServer(disk, logger);
    const port = await server.listen('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer(), logger }));
    const refusing = { variant: new DummyValidator().variant, validate: async () => Promise.reject(new Error('measurement mismatch at PCR 9')) };
    const client = new recoverproto.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ validators: [refusing] }));
    const err = await new Promise<grpc.ServiceError | null>((resolve) => client.recover({ kmsUri: encodeClusterKmsUri(master), storageUri: NO_STORE_URI }, new grpc.Metadata(), { deadline: Date.now() + 5000 }, (e) => resolve(e)));
    client.close();
    assert.ok(err && (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED), String(err));
    let settled = false;
    void server.keys().then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(settled, false, 'no recovery happened');
    await server.close();
  });
});
