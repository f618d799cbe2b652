import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { createLogger, createNopLogger, setJoinId } from '@asterism/logger';
import type { kms } from '@asterism/proto';
import { KeyServiceServer, MAX_DATA_KEY_ID_BYTES, type DataKeyDeriver } from './server.js';

/** Records calls; returns a fixed key or throws. */
class StubDeriver implements DataKeyDeriver {
  calls: Array<{ id: string; length: number }> = [];
  constructor(private readonly result: Buffer | Error) {}
  getDek(id: string, length: number): Buffer {
    this.calls.push({ id, length });
    if (this.result instanceof Error) throw this.result;
    return this.result;
  }
}

function invoke(server: KeyServiceServer, request: kms.GetDataKeyRequest, metadata = new grpc.Metadata()) {
  return new Promise<{ err: Partial<grpc.StatusObject> | null; res?: kms.GetDataKeyResponse }>((resolve) => {
    const call = { request, metadata } as grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>;
    server.handlers().getDataKey(call, (err, res) => resolve({ err: err as Partial<grpc.StatusObject> | null, ...(res ? { res } : {}) }));
  });
}

describe('KeyServiceServer.getDataKey (TestGetDataKey)', () => {
  it('returns the derived key for id "1" with the key- prefix', async () => {
    const deriver = new StubDeriver(Buffer.from('010203', 'hex'));
    const { err, res } = await invoke(new KeyServiceServer(deriver, createNopLogger()), { dataKeyId: '1', length: 32 });
    assert.equal(err, null);
    assert.deepEqual(res?.dataKey, Buffer.from('010203', 'hex'));
    assert.deepEqual(deriver.calls, [{ id: 'key-1', length: 32 }]);
  });

  const invalid: Array<[string, kms.GetDataKeyRequest, RegExp]> = [
    ['length zero (checked first)', { dataKeyId: '', length: 0 }, /can't derive key with length zero/],
    ['missing id', { dataKeyId: '', length: 32 }, /no data key ID specified/],
    ['length beyond the HKDF limit', { dataKeyId: 'x', length: 8161 }, /exceeds the maximum of 8160/],
    ['huge length', { dataKeyId: 'x', length: 0xffffffff }, /exceeds the maximum/],
    ['oversized id', { dataKeyId: 'a'.repeat(MAX_DATA_KEY_ID_BYTES + 1), length: 32 }, /maximum is 256/],
  ];
  for (const [name, req, message] of invalid) {
    it(`rejects ${name} with InvalidArgument before deriving`, async () => {
      const deriver = new StubDeriver(Buffer.alloc(32));
      const { err } = await invoke(new KeyServiceServer(deriver, createNopLogger()), req);
      assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
      assert.match(String(err?.details), message);
      assert.equal(deriver.calls.length, 0);
    });
  }

  it('maps an unexpected deriver failure to Internal without leaking its text', async () => {
    const deriver = new StubDeriver(new Error('secret internal detail'));
    const { err } = await invoke(new KeyServiceServer(deriver, createNopLogger()), { dataKeyId: 'x', length: 32 });
    assert.equal(err?.code, grpc.status.INTERNAL);
    assert.equal(err?.details, 'internal error');
  });

  it('logs an internal failure with the caller join id and names it in the answer', async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    const deriver = new StubDeriver(new Error('secret internal detail'));
    const { err } = await invoke(new KeyServiceServer(deriver, createLogger({ component: 'test', stream })), { dataKeyId: 'x', length: 32 }, setJoinId(new grpc.Metadata(), 'join-7'));
    await new Promise((r) => setImmediate(r));
    assert.equal(err?.details, 'internal error (ref join-7)');
    const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines.map((l) => [l.msg, l.joinId]), [['deriving data key failed', 'join-7']]);
  });

  it('at the default level logs a derivation for a join (join id sent) at info and an anonymous one not at all; never the key', async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    const server = new KeyServiceServer(new StubDeriver(Buffer.from('5ec2e7', 'hex')), createLogger({ component: 'test', stream }));
    await invoke(server, { dataKeyId: 'disk-1', length: 32 }, setJoinId(new grpc.Metadata(), 'join-8'));
    await invoke(server, { dataKeyId: 'disk-2', length: 32 });
    await new Promise((r) => setImmediate(r));
    const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines.map((l) => [l.level, l.msg, l.joinId, l.dataKeyId]), [['info', 'derived data key', 'join-8', 'disk-1']]);
    assert.ok(!chunks.join('').includes('5ec2e7') && !chunks.join('').includes(Buffer.from('5ec2e7', 'hex').toString('base64')));
  });

  it('accepts any UTF-8 id and keeps its case', async () => {
    const deriver = new StubDeriver(Buffer.alloc(4));
    await invoke(new KeyServiceServer(deriver, createNopLogger()), { dataKeyId: 'Ünïcode-ID', length: 4 });
    assert.deepEqual(deriver.calls, [{ id: 'key-Ünïcode-ID', length: 4 }]);
  });
});
