/**
 * The aTLS client when the connection dies in the middle of a call (issue 37, docs/adr/0029).
 * A real aTLS server whose handler never answers sits behind a loopback TCP relay that the test
 * breaks while the call waits:
 *   - reset: the server side's RST reaches the client; the call must end at once with UNAVAILABLE
 *     `[CONNECTION_LOST]`, typed and retryable through atlsCallError;
 *   - silent: the server side is gone but the client's TCP connection stays open (half-open, as
 *     when the server's host dies); without keepalive the call waits out its whole deadline (the
 *     hole, control), with ATLS_CLIENT_CHANNEL_OPTIONS it ends with CONNECTION_LOST well before.
 * Only a generous sanity bound (the 30 s deadline) is asserted; the latencies are printed.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { atlsCallError, ATLS_CLIENT_CHANNEL_OPTIONS, atlsChannelCredentials, atlsServerCredentials } from './index.js';

const DEADLINE_MS = 30_000;
const cleanup: Array<() => void> = [];
after(() => cleanup.forEach((c) => c()));

/** A never-answering aTLS server behind a relay; `brk` breaks the relay's connections. */
async function brokenRelay() {
  const server = new grpc.Server();
  let called!: () => void;
  const inCall = new Promise<void>((r) => (called = r));
  server.addService(kms.APIService, { getDataKey: () => called() });
  const port = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer() }), (e, p) => (e ? rej(e) : res(p))));
  const pairs: Array<{ client: net.Socket; upstream: net.Socket }> = [];
  const relay = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) s.on('error', () => undefined);
    client.pipe(upstream);
    upstream.pipe(client);
    pairs.push({ client, upstream });
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  cleanup.push(() => (server.forceShutdown(), relay.close(), pairs.forEach((p) => (p.client.destroy(), p.upstream.destroy()))));
  return {
    address: `127.0.0.1:${(relay.address() as net.AddressInfo).port}`,
    inCall,
    /** reset: RST to both sides; silent: only the server side goes, the client's connection stays open. */
    brk: (how: 'reset' | 'silent') => pairs.forEach((p) => (p.upstream.unpipe(p.client), p.client.unpipe(p.upstream), p.upstream.resetAndDestroy(), how === 'reset' && p.client.resetAndDestroy())),
  };
}

async function callThenBreak(how: 'reset' | 'silent', options: grpc.ChannelOptions, deadlineMs = DEADLINE_MS) {
  const relay = await brokenRelay();
  const client = new kms.APIClient(relay.address, atlsChannelCredentials({ validators: [new DummyValidator()] }), options);
  cleanup.push(() => client.close());
  const result = new Promise<grpc.ServiceError | null>((res) => client.getDataKey({ dataKeyId: 'k', length: 16 }, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (e) => res(e)));
  await relay.inCall;
  const t0 = performance.now();
  relay.brk(how);
  const err = await result;
  return { err, ms: Math.round(performance.now() - t0) };
}

describe('aTLS client: a connection that dies during a call', () => {
  it('server reset mid-call: UNAVAILABLE [CONNECTION_LOST] at once, typed and retryable', async () => {
    const { err, ms } = await callThenBreak('reset', ATLS_CLIENT_CHANNEL_OPTIONS);
    console.log(`[mid-call-loss] reset: ${ms} ms, ${err?.code} ${err?.details}`);
    assert.equal(err?.code, grpc.status.UNAVAILABLE, String(err));
    assert.match(err!.details, /^\[CONNECTION_LOST\] connection lost during a call \(ECONNRESET\)/);
    const typed = atlsCallError(err!);
    assert.equal(typed?.code, 'CONNECTION_LOST');
    assert.equal(typed?.retryable, true);
    assert.ok(ms < DEADLINE_MS);
  });

  it('control, no keepalive: a silently dead server leaves the call waiting out its deadline', async () => {
    const { err, ms } = await callThenBreak('silent', {}, 4000);
    console.log(`[mid-call-loss] silent, no keepalive: ${ms} ms, ${err?.code} ${err?.details?.slice(0, 40)}`);
    assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED, 'the hole: nothing ends the call but its deadline');
  });

  it(`silently dead server with the aTLS client's keepalive: CONNECTION_LOST before the ${DEADLINE_MS / 1000} s deadline`, async () => {
    const { err, ms } = await callThenBreak('silent', ATLS_CLIENT_CHANNEL_OPTIONS);
    console.log(`[mid-call-loss] silent, keepalive: ${ms} ms, ${err?.code} ${err?.details}`);
    assert.equal(err?.code, grpc.status.UNAVAILABLE, String(err));
    const typed = atlsCallError(err!);
    assert.equal(typed?.code, 'CONNECTION_LOST', err!.details);
    assert.equal(typed?.retryable, true);
    assert.ok(ms < DEADLINE_MS, `${ms} ms`);
  });
});
