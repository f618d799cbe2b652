import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { REASON_METADATA } from '@asterism/service-runtime';
import { parseKmsUri } from '@asterism/crypto';
import type { recoverproto } from '@asterism/proto';
import { findSecretLeaks } from '@asterism/testing';
import { encodeMasterSecretFile } from '../init/outputs.js';
import { runRecover, type RecoverConnector, type RecoverFailureCode } from './recover-command.js';

const dir = mkdtempSync(join(tmpdir(), 'recover-cmd-'));
const master = { key: Buffer.alloc(32, 7), salt: Buffer.alloc(32, 9) };
const secretFile = join(dir, 'asterism-mastersecret.json');
writeFileSync(secretFile, encodeMasterSecretFile(master));

function statusError(code: grpc.status, details: string, reason?: string): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  if (reason) metadata.set(REASON_METADATA, reason);
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

/** Answers each endpoint from a script of outcomes, one per attempt. */
class ScriptedConnector implements RecoverConnector {
  readonly requests: recoverproto.RecoverMessage[] = [];
  constructor(
    private readonly script: Record<string, Array<grpc.ServiceError | 'ok'>>,
    private readonly attestation: Record<string, Error> = {},
  ) {}
  async recover(endpoint: string, req: recoverproto.RecoverMessage): Promise<void> {
    this.requests.push(req);
    const next = this.script[endpoint]!.shift() ?? statusError(grpc.status.UNAVAILABLE, 'connection refused');
    if (next !== 'ok') throw next;
  }
  attestationError(endpoint: string): Error | undefined {
    return this.attestation[endpoint];
  }
}

describe('asterism recover', () => {
  it('sends the cluster KMS URI with the master secret and storage://no-store, retrying until the node serves', async () => {
    const c = new ScriptedConnector({ 'n:9999': [statusError(grpc.status.UNAVAILABLE, 'connection refused'), 'ok'] });
    const lines: string[] = [];
    const report = await runRecover(c, { endpoints: ['n:9999'], masterSecretFile: secretFile, retryForMs: 5000, retryDelayMs: 1 }, (l) => lines.push(l));
    assert.deepEqual(report, [{ endpoint: 'n:9999', ok: true }]);
    assert.equal(c.requests.length, 2);
    assert.deepEqual(parseKmsUri(c.requests[0]!.kmsUri), { type: 'cluster-kms', masterSecret: master });
    assert.equal(c.requests[0]!.storageUri, 'storage://no-store');
    assert.deepEqual(findSecretLeaks(lines.join('\n'), [{ name: 'key', value: master.key }, { name: 'salt', value: master.salt }]), []);
  });

  it('a node busy with a flood (RESOURCE_EXHAUSTED: attempt limit, key check queue) is tried again', async () => {
    const c = new ScriptedConnector({ 'n:9999': [statusError(grpc.status.RESOURCE_EXHAUSTED, 'the key check queue is full; retry in a few seconds (KEY_CHECK_QUEUE_FULL)'), 'ok'] });
    const report = await runRecover(c, { endpoints: ['n:9999'], masterSecretFile: secretFile, retryForMs: 5000, retryDelayMs: 1 }, () => undefined);
    assert.deepEqual(report, [{ endpoint: 'n:9999', ok: true }]);
    assert.equal(c.requests.length, 2);
  });

  const cases: Array<[string, Array<grpc.ServiceError | 'ok'>, Error | undefined, RecoverFailureCode, RegExp]> = [
    ['wrong master secret', [statusError(grpc.status.PERMISSION_DENIED, 'the key derived from this master secret does not open the node\'s state disk')], undefined, 'KEY_REFUSED', /refused the master secret/],
    ['node not waiting for recovery', [statusError(grpc.status.FAILED_PRECONDITION, 'node is not waiting for recovery')], undefined, 'NOT_WAITING', /not waiting for recovery/],
    ['unreachable node', [], undefined, 'NODE_UNREACHABLE', /no recovery server reachable after \d+ attempts/],
    ['attestation failure', [statusError(grpc.status.UNAVAILABLE, 'handshake failed')], new Error('measurement mismatch at PCR 9'), 'ATTESTATION_FAILED', /failed attestation: measurement mismatch at PCR 9/],
    ['node error', [statusError(grpc.status.INTERNAL, 'disk gone')], undefined, 'RECOVER_FAILED', /recovery failed on the node: disk gone/],
    // An Asterism node names its reason in the status metadata: it decides, whatever the code and text.
    ['reason KEY_DOES_NOT_OPEN_DISK', [statusError(grpc.status.UNKNOWN, 'no', 'KEY_DOES_NOT_OPEN_DISK')], undefined, 'KEY_REFUSED', /refused the master secret: no/],
    ['reason NOT_WAITING', [statusError(grpc.status.UNKNOWN, 'no', 'NOT_WAITING')], undefined, 'NOT_WAITING', /the node refused: no/],
    ['reason KMS_URI_INVALID', [statusError(grpc.status.UNKNOWN, 'no', 'KMS_URI_INVALID')], undefined, 'REQUEST_INVALID', /refused the request: no/],
  ];
  for (const [name, script, attestation, code, message] of cases) {
    it(`${name}: ${code}, and the other nodes are still tried`, async () => {
      const c = new ScriptedConnector({ bad: [...script], good: ['ok'] }, attestation ? { bad: attestation } : {});
      const report = await runRecover(c, { endpoints: ['bad', 'good'], masterSecretFile: secretFile, retryForMs: 50, retryDelayMs: 10 }, () => undefined);
      const bad = report[0]!;
      assert.equal(bad.ok, false);
      if (!bad.ok) {
        assert.equal(bad.error.code, code);
        assert.match(bad.error.message, message);
      }
      assert.deepEqual(report[1], { endpoint: 'good', ok: true });
    });
  }

  for (const [name, content, message] of [
    ['not JSON', 'nope', /reading master secret/],
    ['no salt', JSON.stringify({ key: Buffer.alloc(32).toString('base64') }), /needs "key" and "salt"/],
    ['short key', JSON.stringify({ key: Buffer.alloc(8).toString('base64'), salt: 'AQ==' }), /shorter than 16 bytes/],
  ] as const) {
    it(`master secret file ${name}: refused before any node is contacted`, async () => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, content);
      const c = new ScriptedConnector({ n: ['ok'] });
      await assert.rejects(runRecover(c, { endpoints: ['n'], masterSecretFile: file, retryForMs: 10 }, () => undefined), (err: Error & { code?: string }) => err.code === 'MASTER_SECRET_INVALID' && message.test(err.message));
      assert.equal(c.requests.length, 0);
    });
  }
});
