import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { K8sError } from '@asterism/k8s';
import { createLogger, setJoinId } from '@asterism/logger';
import type { join } from '@asterism/proto';
import { PeerRateLimiter, REASON_METADATA } from '@asterism/service-runtime';
import { Registry } from 'prom-client';
import { JoinServer } from './join-server.js';
import { JoinMetrics } from './metrics.js';
import { JoinError } from './ticket/errors.js';
import type { TicketContext, TicketIssuer } from './ticket/ticket-issuer.js';

/** Runs one (well-formed) IssueRejoinTicket through the JoinServer with an issuer that fails with `err`; returns the answer and the log lines. */
async function answer(err: unknown) {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (d: Buffer) => chunks.push(d.toString()));
  const issuer = { issueJoinTicket: () => Promise.reject(err), issueRejoinTicket: () => Promise.reject(err) } as unknown as TicketIssuer;
  const server = new JoinServer(issuer, createLogger({ component: 'test', stream }), new JoinMetrics(new Registry()), new PeerRateLimiter(100, 100), () => 'dummy');
  const call = { request: { diskUuid: DISK_UUID }, metadata: setJoinId(new grpc.Metadata(), 'join-42'), getPeer: () => '10.0.0.9:4000', on: () => undefined };
  const status = await new Promise<Partial<grpc.StatusObject>>((resolve) =>
    server.handlers().issueRejoinTicket(call as unknown as grpc.ServerUnaryCall<join.IssueRejoinTicketRequest, join.IssueRejoinTicketResponse>, (e) => resolve(e as Partial<grpc.StatusObject>)),
  );
  await new Promise((r) => setImmediate(r));
  const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status, lines };
}

const DISK_UUID = '0a1b2c3d-0000-4000-8000-00000000000a';

describe('JoinServer status mapping (one toStatus table)', () => {
  const cases: Array<[string, unknown, grpc.status, string]> = [
    ['invalid request keeps its message', new JoinError('INVALID_REQUEST', 'invalid disk UUID'), grpc.status.INVALID_ARGUMENT, 'invalid disk UUID'],
    ['keyservice down is retryable', new JoinError('KEYSERVICE_UNAVAILABLE', 'getting measurement secret: no answer'), grpc.status.UNAVAILABLE, 'getting measurement secret: no answer'],
    ['concurrent control-plane join', new JoinError('CONTROL_PLANE_JOIN_IN_PROGRESS', 'maybe another node is already joining'), grpc.status.ABORTED, 'maybe another node is already joining'],
    ['our own fault hides its cause', new JoinError('INTERNAL', 'generating Kubernetes join arguments: forbidden'), grpc.status.INTERNAL, 'internal error (ref join-42)'],
    ['a non-JoinError domain error is internal', new K8sError('K8S_FORBIDDEN', 'secrets is forbidden'), grpc.status.INTERNAL, 'internal error (ref join-42)'],
    ['a plain Error is internal', new Error('ECONNRESET'), grpc.status.INTERNAL, 'internal error (ref join-42)'],
  ];
  for (const [name, err, code, details] of cases) {
    it(name, async () => {
      const { status, lines } = await answer(err);
      assert.deepEqual({ code: status.code, details: status.details }, { code, details });
      assert.equal(status.metadata?.get('x-join-id')[0], 'join-42', 'the join id is answered in the trailer');
      // The reason a client restores (fromStatus): the JoinError's code, none for internal causes.
      const reason = code === grpc.status.INTERNAL ? [] : [(err as JoinError).code];
      assert.deepEqual(status.metadata?.get(REASON_METADATA), reason);
      const refusal = lines.find((l) => l.msg === 'ticket refused' || l.msg === 'ticket failed');
      assert.equal(refusal?.joinId, 'join-42');
      assert.match(JSON.stringify(refusal?.err), new RegExp((err as Error).message), 'the cause is in the log line');
    });
  }
});

describe('JoinServer rate limit', () => {
  it('answers RESOURCE_EXHAUSTED with reason RATE_LIMITED and the join id, through toStatus', async () => {
    const issuer = { issueJoinTicket: () => Promise.reject(new Error('not reached')) } as unknown as TicketIssuer;
    const server = new JoinServer(issuer, createLogger({ component: 'test', stream: new PassThrough() }), new JoinMetrics(new Registry()), new PeerRateLimiter(0.001, 1), () => 'dummy');
    const call = { request: {}, metadata: setJoinId(new grpc.Metadata(), 'join-7'), getPeer: () => '10.0.0.9:4000', on: () => undefined };
    const ask = () =>
      new Promise<Partial<grpc.StatusObject>>((resolve) =>
        server.handlers().issueJoinTicket(call as unknown as grpc.ServerUnaryCall<join.IssueJoinTicketRequest, join.IssueJoinTicketResponse>, (e) => resolve(e as Partial<grpc.StatusObject>)),
      );
    await ask();
    const limited = await ask();
    assert.equal(limited.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.deepEqual(limited.metadata?.get(REASON_METADATA), ['RATE_LIMITED']);
    assert.deepEqual(limited.metadata?.get('x-join-id'), ['join-7']);
  });
});

describe('JoinServer: the one place a call becomes domain input', () => {
  /** One call through the server with a recording issuer; returns the status and what the issuer saw. */
  async function through(request: Partial<join.IssueJoinTicketRequest>) {
    const seen: TicketContext[] = [];
    const issuer = {
      issueJoinTicket: (_req: unknown, ctx: TicketContext) => (seen.push(ctx), Promise.resolve({})),
    } as unknown as TicketIssuer;
    const server = new JoinServer(issuer, createLogger({ component: 'test', stream: new PassThrough() }), new JoinMetrics(new Registry()), new PeerRateLimiter(100, 100), () => 'dummy');
    const call = { request, metadata: setJoinId(new grpc.Metadata(), 'join-9'), getPeer: () => '[::ffff:10.0.0.9]:4000', on: () => undefined };
    const status = await new Promise<Partial<grpc.StatusObject> | null>((resolve) =>
      server.handlers().issueJoinTicket(call as unknown as grpc.ServerUnaryCall<join.IssueJoinTicketRequest, join.IssueJoinTicketResponse>, (e) => resolve(e as Partial<grpc.StatusObject> | null)),
    );
    return { status, seen };
  }

  it('an unparsable request is INVALID_ARGUMENT and never reaches the issuer', async () => {
    const { status, seen } = await through({ diskUuid: 'nope', certificateRequest: Buffer.alloc(0), hostPublicKey: Buffer.alloc(0), hostCertificatePrincipals: [] });
    assert.equal(status?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(String(status?.details), /disk_uuid/);
    assert.deepEqual(seen, []);
  });

  it('a rejoin request is parsed and the peer resolved once into the ticket context', async () => {
    const seen: TicketContext[] = [];
    const issuer = { issueRejoinTicket: (_req: unknown, ctx: TicketContext) => (seen.push(ctx), Promise.resolve({})) } as unknown as TicketIssuer;
    let lookups = 0;
    const server = new JoinServer(issuer, createLogger({ component: 'test', stream: new PassThrough() }), new JoinMetrics(new Registry()), new PeerRateLimiter(100, 100), () => 'dummy', () => (lookups++, { document: Buffer.from('doc') }));
    const call = { request: { diskUuid: DISK_UUID }, metadata: setJoinId(new grpc.Metadata(), 'join-9'), getPeer: () => '[::ffff:10.0.0.9]:4000', on: () => undefined };
    const status = await new Promise((resolve) =>
      server.handlers().issueRejoinTicket(call as unknown as grpc.ServerUnaryCall<join.IssueRejoinTicketRequest, join.IssueRejoinTicketResponse>, (e) => resolve(e)),
    );
    assert.equal(status, null);
    assert.equal(lookups, 1);
    assert.deepEqual({ address: seen[0]?.peer.address, ip: seen[0]?.peer.ip, doc: seen[0]?.peer.attestation?.document?.toString(), joinId: seen[0]?.joinId }, { address: '[::ffff:10.0.0.9]:4000', ip: '10.0.0.9', doc: 'doc', joinId: 'join-9' });
  });
});
