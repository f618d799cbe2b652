import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { kms } from '@asterism/proto';
import { loggingInterceptor, statusName } from './grpc-interceptor.js';
import { setJoinId } from './join-id.js';
import { createLogger } from './logger.js';

describe('loggingInterceptor (real grpc-js server)', () => {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (d: Buffer) => chunks.push(d.toString()));
  const logger = createLogger({ component: 'test', stream });
  const observed: Array<{ method: string; code: number }> = [];
  const server = new grpc.Server({ interceptors: [loggingInterceptor(logger, (c) => observed.push(c))] });
  let client: kms.APIClient;

  before(async () => {
    server.addService(kms.APIService, {
      getDataKey(call: grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) {
        if (call.request.dataKeyId === '') cb({ code: grpc.status.INVALID_ARGUMENT, details: 'no data key ID specified' });
        else cb(null, { dataKey: Buffer.from('super-secret-response') });
      },
    });
    const port = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
    );
    client = new kms.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  after(() => {
    client.close();
    server.forceShutdown();
  });

  const call = (req: kms.GetDataKeyRequest) =>
    new Promise<grpc.StatusObject | null>((res) => client.getDataKey(req, (err) => res(err ? (err as grpc.ServiceError) : null)));

  it('logs method, peer, status and duration, never payloads', async () => {
    assert.equal(await call({ dataKeyId: 'id', length: 32 }), null);
    const err = await call({ dataKeyId: '', length: 32 });
    assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
    await new Promise((r) => setImmediate(r));
    const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(lines.length, 2);
    assert.equal(lines[0].method, '/kms.API/GetDataKey');
    assert.equal(lines[0].status, 'Ok');
    assert.equal(lines[0].level, 'info');
    assert.match(lines[0].peer, /^127\.0\.0\.1:\d+$/);
    assert.equal(typeof lines[0].durationMs, 'number');
    assert.equal(lines[1].status, 'InvalidArgument');
    assert.equal(lines[1].level, 'warn');
    assert.equal(lines[1].details, 'no data key ID specified');
    assert.ok(!chunks.join('').includes('super-secret-response'));
    assert.deepEqual(observed.map((o) => o.code), [grpc.status.OK, grpc.status.INVALID_ARGUMENT]);
  });

  const joinIdCases: Array<[string, string | undefined, string | undefined]> = [
    ['a sane join id is logged', 'join-abc_1.2', 'join-abc_1.2'],
    ['no join id, no field', undefined, undefined],
    ['a join id with spaces or slashes is dropped', 'evil id/..', undefined],
    ['an over-long join id is dropped', 'a'.repeat(65), undefined],
  ];
  for (const [name, sent, logged] of joinIdCases) {
    it(name, async () => {
      chunks.length = 0;
      const md = setJoinId(new grpc.Metadata(), sent);
      await new Promise<void>((res) => client.getDataKey({ dataKeyId: '', length: 32 }, md, () => res()));
      await new Promise((r) => setImmediate(r));
      const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { joinId?: string });
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.joinId, logged);
    });
  }

  it('names status codes in CamelCase', () => {
    assert.equal(statusName(grpc.status.INVALID_ARGUMENT), 'InvalidArgument');
    assert.equal(statusName(grpc.status.UNAVAILABLE), 'Unavailable');
  });
});

describe('loggingInterceptor with okLevel debug (high-rate services)', () => {
  const cases: Array<[string, 'info' | 'debug', number]> = [
    ['an info logger drops successful calls but keeps failures', 'info', 1],
    ['a debug logger writes successful calls at debug', 'debug', 2],
  ];
  for (const [name, level, expectedLines] of cases) {
    it(name, async () => {
      const stream = new PassThrough();
      const chunks: string[] = [];
      stream.on('data', (d: Buffer) => chunks.push(d.toString()));
      const observed: number[] = [];
      const logger = createLogger({ component: 'test', stream, level });
      const server = new grpc.Server({ interceptors: [loggingInterceptor(logger, (c) => observed.push(c.code), { okLevel: 'debug' })] });
      server.addService(kms.APIService, {
        getDataKey(call: grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) {
          if (call.request.dataKeyId === '') cb({ code: grpc.status.INVALID_ARGUMENT, details: 'no data key ID specified' });
          else cb(null, { dataKey: Buffer.from('k') });
        },
      });
      const port = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
      const client = new kms.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      try {
        for (const dataKeyId of ['id', '']) await new Promise<void>((res) => client.getDataKey({ dataKeyId, length: 32 }, () => res()));
        await new Promise((r) => setImmediate(r));
        const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: string; status: string });
        assert.equal(lines.length, expectedLines);
        assert.deepEqual(lines.at(-1), { ...lines.at(-1), level: 'warn', status: 'InvalidArgument' });
        if (expectedLines === 2) assert.deepEqual(lines[0], { ...lines[0], level: 'debug', status: 'Ok' });
        assert.deepEqual(observed, [grpc.status.OK, grpc.status.INVALID_ARGUMENT], 'metrics see every call either way');
      } finally {
        client.close();
        server.forceShutdown();
      }
    });
  }
});

describe('loggingInterceptor failLevel debug (servers that log their own outcomes)', () => {
  const cases: Array<[string, 'info' | 'debug', number]> = [
    ['an info logger writes no line for a failed call', 'info', 0],
    ['a debug logger writes it at debug', 'debug', 1],
  ];
  for (const [name, level, expectedLines] of cases) {
    it(name, async () => {
      const stream = new PassThrough();
      const chunks: string[] = [];
      stream.on('data', (d: Buffer) => chunks.push(d.toString()));
      const observed: number[] = [];
      const logger = createLogger({ component: 'test', stream, level });
      const server = new grpc.Server({ interceptors: [loggingInterceptor(logger, (c) => observed.push(c.code), { okLevel: 'debug', failLevel: 'debug' })] });
      server.addService(kms.APIService, {
        getDataKey(_call: grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) {
          cb({ code: grpc.status.INTERNAL, details: 'broken' });
        },
      });
      const port = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
      const client = new kms.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      try {
        await new Promise<void>((res) => client.getDataKey({ dataKeyId: 'id', length: 32 }, () => res()));
        await new Promise((r) => setImmediate(r));
        const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: string; status: string });
        assert.equal(lines.length, expectedLines);
        if (expectedLines === 1) assert.deepEqual(lines[0], { ...lines[0], level: 'debug', status: 'Internal' });
        assert.deepEqual(observed, [grpc.status.INTERNAL], 'metrics see the call either way');
      } finally {
        client.close();
        server.forceShutdown();
      }
    });
  }
});
