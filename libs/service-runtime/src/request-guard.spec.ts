import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@asterism/logger';
import { GrpcServer } from './grpc-server.js';
import { REASON_METADATA } from './rpc-status.js';

const identity = (b: Buffer) => b;
/** A unary and a server-streaming method over raw bytes (no proto needed). */
const SERVICE: grpc.ServiceDefinition = {
  echo: { path: '/t.T/Echo', requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
  slow: { path: '/t.T/Slow', requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
};
const ARRIVAL_MS = 300;
const CAP = 4;

/** One gRPC frame: uncompressed flag, length, message. */
const frame = (msg: Buffer) => Buffer.concat([Buffer.from([0]), Buffer.from(Uint32Array.of(msg.length).buffer).reverse(), msg]);

interface Answer {
  status?: string;
  reason?: string;
  rstCode?: number;
}

/** Opens a raw HTTP/2 stream for `path`; `body` undefined = half-open (headers only, never ends). */
function open(session: http2.ClientHttp2Session, path: string, body?: Buffer): Promise<Answer> {
  const req = session.request({ ':path': path, ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false });
  const answer: Answer = {};
  const read = (h: http2.IncomingHttpHeaders) => {
    if (h['grpc-status'] !== undefined) answer.status = String(h['grpc-status']);
    if (h[REASON_METADATA] !== undefined) answer.reason = String(h[REASON_METADATA]);
  };
  req.on('response', read);
  req.on('trailers', read);
  req.on('error', () => undefined);
  req.resume();
  if (body) req.end(body);
  return new Promise((resolve) => req.on('close', () => resolve({ ...answer, rstCode: req.rstCode })));
}

describe('server shape: request guard and stream cap (real grpc-js server, raw HTTP/2 peer)', () => {
  const lines: Array<Record<string, unknown>> = [];
  const out = new PassThrough();
  out.on('data', (d: Buffer) => d.toString().split('\n').filter(Boolean).forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)));
  const server = new GrpcServer({ logger: createLogger({ component: 'test', stream: out }), streamLimits: { maxConcurrentStreams: CAP, requestArrivalMs: ARRIVAL_MS } });
  let handled = 0;
  let port = 0;
  let session: http2.ClientHttp2Session;

  before(async () => {
    server.server.addService(SERVICE, {
      echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
        handled++;
        cb(null, call.request);
      },
      // Outlives the arrival deadline: the guard must not cut off a call whose request arrived.
      slow: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => setTimeout(() => cb(null, call.request), ARRIVAL_MS * 2),
    });
    port = await server.listen('127.0.0.1', 0, grpc.ServerCredentials.createInsecure());
    session = http2.connect(`http://127.0.0.1:${port}`);
    await new Promise((resolve) => session.once('remoteSettings', resolve));
  });
  after(async () => {
    session.destroy();
    await server.stop(100);
  });

  it('announces the stream cap in its HTTP/2 settings', () => {
    assert.equal(session.remoteSettings.maxConcurrentStreams, CAP);
  });

  it('a half-open stream is answered DEADLINE_EXCEEDED (reason REQUEST_TIMEOUT) and reset after the arrival deadline', async () => {
    const started = Date.now();
    const answer = await open(session, '/t.T/Echo');
    assert.deepEqual(answer, { status: String(grpc.status.DEADLINE_EXCEEDED), reason: 'REQUEST_TIMEOUT', rstCode: http2.constants.NGHTTP2_NO_ERROR });
    assert.ok(Date.now() - started >= ARRIVAL_MS - 20);
  });

  it('a stream that ends without a message is INVALID_ARGUMENT (REQUEST_MISSING), never reaches the handler', async () => {
    const before = handled;
    const answer = await open(session, '/t.T/Echo', Buffer.alloc(0));
    assert.equal(answer.status, String(grpc.status.INVALID_ARGUMENT));
    assert.equal(answer.reason, 'REQUEST_MISSING');
    assert.equal(handled, before);
  });

  it('a complete request is served, also when its handler outlives the arrival deadline', async () => {
    assert.equal((await open(session, '/t.T/Echo', frame(Buffer.from('hi')))).status, '0');
    assert.equal((await open(session, '/t.T/Slow', frame(Buffer.from('hi')))).status, '0');
  });

  it('reset slots are reused: 5x the cap of half-open streams all end, one log line per connection and reason', async () => {
    const logged = lines.length;
    const answers = await Promise.all(Array.from({ length: CAP * 5 }, () => open(session, '/t.T/Echo')));
    assert.ok(answers.every((a) => a.reason === 'REQUEST_TIMEOUT'));
    // This connection's REQUEST_TIMEOUT was already logged by the first test: nothing new.
    assert.deepEqual(lines.slice(logged), []);
    const reasons = lines.filter((l) => l.reason).map((l) => [l.level, l.reason]);
    assert.deepEqual(reasons, [
      ['info', 'REQUEST_TIMEOUT'],
      ['info', 'REQUEST_MISSING'],
    ]);
  });

  it('a peer that closes its streams (END_STREAM + RST_STREAM) is logged once per connection at info, never as an error', async () => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    await new Promise((resolve) => s.once('remoteSettings', resolve));
    const logged = lines.length;
    for (let i = 0; i < 3; i++) {
      const req = s.request({ ':path': '/t.T/Echo', ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false });
      req.on('error', () => undefined);
      await new Promise((r) => setTimeout(r, 30));
      req.close(http2.constants.NGHTTP2_CANCEL);
      await new Promise((r) => req.on('close', r));
    }
    s.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const added = lines.slice(logged);
    assert.equal(added.length, 1);
    assert.equal(added[0]!.level, 'info');
    assert.equal(added[0]!.reason, 'REQUEST_MISSING');
  });

  it('a connection that drops with half-open streams is logged once as PEER_CANCELLED', async () => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    await new Promise((resolve) => s.once('remoteSettings', resolve));
    const logged = lines.length;
    for (let i = 0; i < 3; i++) s.request({ ':path': '/t.T/Echo', ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false }).on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 50));
    s.destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(lines.slice(logged).map((l) => [l.level, l.reason]), [['info', 'PEER_CANCELLED']]);
    assert.equal(lines.filter((l) => l.level === 'error' || l.level === 'warn').length, 0);
  });
});
