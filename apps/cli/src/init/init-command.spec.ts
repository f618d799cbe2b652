import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { AttestationError, DummyIssuer, DummyValidator, type Validator } from '@asterism/attestation';
import { AtlsError, atlsChannelCredentials, atlsServerCredentials } from '@asterism/atls';
import { parseKmsUri } from '@asterism/crypto';
import { init } from '@asterism/proto';
import { GrpcInitConnector } from './grpc-connector.js';
import { InitCommandError, runInit, type Progress } from './init-command.js';
import { decodeMasterSecretFile, WORKSPACE_FILES } from './outputs.js';

type Handler = (call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>) => void;
const servers: grpc.Server[] = [];
after(() => servers.forEach((s) => s.forceShutdown()));

async function serve(handler: Handler, port = 0): Promise<number> {
  const server = new grpc.Server();
  server.addService(init.APIService, { init: handler });
  servers.push(server);
  return new Promise((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
}

function recorder(): Progress & { lines: string[]; logs: Buffer[] } {
  const lines: string[] = [];
  const logs: Buffer[] = [];
  return { lines, logs, info: (l) => void lines.push(l), nodeLog: (c) => void logs.push(c) };
}

const connector = new GrpcInitConnector(() => grpc.credentials.createInsecure());
const opts = (endpoint: string) => ({ endpoint, workspace: mkdtempSync(join(tmpdir(), 'cli-')), initSecret: Buffer.from('secret'), retryDelayMs: 50, retryForMs: 5000 });

describe('runInit', () => {
  it('writes kubeconfig, master secret and cluster id with mode 0600 on success', async () => {
    let seen: init.InitRequest | undefined;
    const port = await serve((call) => {
      seen = call.request;
      call.write({ initSuccess: { kubeconfig: Buffer.from('apiVersion: v1\n'), ownerId: Buffer.alloc(0), clusterId: Buffer.alloc(32, 7) } });
      call.end();
    });
    const o = opts(`127.0.0.1:${port}`);
    const res = await runInit(connector, o, recorder());
    assert.deepEqual(res.clusterId, Buffer.alloc(32, 7));
    for (const f of Object.values(WORKSPACE_FILES)) {
      assert.equal(statSync(join(o.workspace, f)).mode & 0o777, 0o600, f);
    }
    assert.equal(readFileSync(res.kubeconfigPath, 'utf8'), 'apiVersion: v1\n');
    // The request carries the generated master secret as a cluster-kms URI and a 32-byte salt.
    const kms = parseKmsUri(seen!.kmsUri);
    const onDisk = decodeMasterSecretFile(readFileSync(res.masterSecretPath, 'utf8'));
    assert.equal(kms.type, 'cluster-kms');
    if (kms.type === 'cluster-kms') assert.deepEqual(Buffer.from(kms.masterSecret.key), onDisk.key);
    assert.equal(seen!.storageUri, 'storage://no-store');
    assert.equal(seen!.measurementSalt.length, 32);
    assert.equal(seen!.initSecret.toString(), 'secret');
  });

  it('shows the failure and the node logs, then fails with INIT_FAILED', async () => {
    const port = await serve((call) => {
      call.write({ initFailure: { error: 'rpc error: code = PermissionDenied desc = invalid init secret' } });
      call.write({ log: { log: Buffer.from('line 1\n') } });
      call.write({ log: { log: Buffer.from('line 2\n') } });
      call.emit('error', { code: grpc.status.PERMISSION_DENIED, details: 'invalid init secret' });
    });
    const p = recorder();
    const o = opts(`127.0.0.1:${port}`);
    await assert.rejects(runInit(connector, o, p), (e: unknown) => e instanceof InitCommandError && e.code === 'INIT_FAILED' && /invalid init secret/.test(e.message));
    assert.equal(Buffer.concat(p.logs).toString(), 'line 1\nline 2\n');
    assert.ok(!existsSync(join(o.workspace, WORKSPACE_FILES.kubeconfig)));
  });

  it('retries while the node is unreachable, then succeeds', async () => {
    const probe = await serve(() => undefined);
    servers.pop()!.forceShutdown();
    const o = opts(`127.0.0.1:${probe}`);
    const p = recorder();
    const run = runInit(connector, o, p);
    await new Promise((r) => setTimeout(r, 200));
    await serve((call) => {
      call.write({ initSuccess: { kubeconfig: Buffer.from('k'), ownerId: Buffer.alloc(0), clusterId: Buffer.alloc(32) } });
      call.end();
    }, probe);
    await run;
    assert.ok(p.lines.some((l) => /Retrying/.test(l)));
    // The reason is grpc-js's connection error without its framing.
    assert.ok(p.lines.includes(`Node not reachable yet (connect ECONNREFUSED 127.0.0.1:${probe})`), p.lines.join('\n'));
  });

  it('does not retry after the node answered', async () => {
    let calls = 0;
    const port = await serve((call) => {
      calls++;
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'init server is shutting down' });
    });
    // UNAVAILABLE before any message counts as not connected: retried within the budget, then reported.
    await assert.rejects(runInit(connector, { ...opts(`127.0.0.1:${port}`), retryForMs: 300 }, recorder()), (e: unknown) => e instanceof InitCommandError && e.code === 'NODE_UNREACHABLE');
    assert.ok(calls >= 2);
    let answered = 0;
    const port2 = await serve((call) => {
      answered++;
      call.write({ log: { log: Buffer.from('x') } });
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'went away' });
    });
    await assert.rejects(runInit(connector, opts(`127.0.0.1:${port2}`), recorder()), (e: unknown) => e instanceof InitCommandError && e.code === 'INIT_FAILED');
    assert.equal(answered, 1);
  });

  it('does not retry a node whose attestation was refused', async () => {
    let dials = 0;
    const refusing = {
      // The connector throws the typed AtlsError its aTLS credentials reported (never a text to match).
      init: () => ({
        [Symbol.asyncIterator]: () => ({
          next: async (): Promise<IteratorResult<init.InitResponse>> => {
            dials++;
            throw new AtlsError('ATTESTATION_INVALID', 'validating qemu-vtpm attestation document (MEASUREMENT_MISMATCH): PCR[15] expected 00000000… got c477860a…');
          },
        }),
      }),
    };
    await assert.rejects(runInit(refusing, opts('127.0.0.1:1'), recorder()), (e: unknown) => e instanceof InitCommandError && e.code === 'ATTESTATION_REFUSED' && /PCR\[15\]/.test(e.message));
    assert.equal(dials, 1);
  });

  it('refuses to overwrite an existing master secret file', async () => {
    const port = await serve((call) => call.end());
    const o = opts(`127.0.0.1:${port}`);
    await assert.rejects(runInit(connector, o, recorder()), (e: unknown) => e instanceof InitCommandError && e.code === 'NO_RESPONSE');
    await assert.rejects(runInit(connector, o, recorder()), (e: unknown) => e instanceof InitCommandError && e.code === 'OUTPUT_FAILED');
  });

  it('over real aTLS: a node whose document the validator refuses ends as ATTESTATION_REFUSED after one dial (typed AtlsError, no text)', async () => {
    const server = new grpc.Server();
    let calls = 0;
    server.addService(init.APIService, {
      init: (call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>) => {
        calls++;
        call.end();
      },
    });
    servers.push(server);
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer() }), (e, p) => (e ? reject(e) : resolve(p))));
    let dials = 0;
    const refusing: Validator = {
      variant: new DummyValidator().variant,
      validate: async () => {
        dials++;
        throw new AttestationError('MEASUREMENT_MISMATCH', 'PCR[15] expected 00000000… got c477860a…');
      },
    };
    const atls = new GrpcInitConnector((onConnectionError) => atlsChannelCredentials({ validators: [refusing], onConnectionError }));
    await assert.rejects(runInit(atls, opts(`127.0.0.1:${port}`), recorder()), (e: unknown) => e instanceof InitCommandError && e.code === 'ATTESTATION_REFUSED' && e.cause instanceof AtlsError && /PCR\[15\]/.test(e.message));
    assert.equal(dials, 1);
    assert.equal(calls, 0);
  });
});
