import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator, Variant, type Issuer, type Validator } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { atlsChannelCredentials, AtlsError, type AtlsChannelOptions, type AtlsErrorCode } from './index.js';
import { connectOnce, startFaultServer, type Fault } from './testing/fault-server.fixture.js';
import { getDataKey } from './services.fixture.js';

// Fault injection for the client connector: a real loopback server resets, closes, stays silent
// or sends a TLS alert in each phase of an aTLS connection, many times over. Every attempt must
// end in a typed AtlsError naming the phase, and nothing may reach the process as an uncaught
// exception or unhandled rejection (the bug: an 'error' event with no listener after the handshake).

const ITERATIONS = 25;

let unhandled: unknown[] = [];
const onUnhandled = (err: unknown) => unhandled.push(err);
before(() => {
  process.on('uncaughtException', onUnhandled);
  process.on('unhandledRejection', onUnhandled);
});
after(() => {
  process.off('uncaughtException', onUnhandled);
  process.off('unhandledRejection', onUnhandled);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sleeps `ms`, or rejects as soon as `signal` aborts (the connector aborts a phase when the link drops). */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

/** A dummy validator that takes `ms` before answering (the client is "in verification" meanwhile). */
function slowValidator(ms: number): Validator {
  const inner = new DummyValidator();
  return { variant: inner.variant, validate: async (d, n, signal) => (await abortableSleep(ms, signal), inner.validate(d, n)) };
}

/** A dummy issuer that takes `ms` (or forever, honouring abort) before answering. */
function slowIssuer(ms: number | 'forever'): Issuer {
  const inner = new DummyIssuer();
  return {
    variant: Variant.fromString('dummy'),
    issue: async (u, n, signal) => {
      if (ms === 'forever') await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
      else await abortableSleep(ms, signal);
      return inner.issue(u, n);
    },
  };
}

// Generous deadlines where the fault must win (a loaded CI machine can take >100 ms for a
// handshake); short ones only in the cells that test the deadline itself.
const fast = { handshakeTimeoutMs: 2000, validationTimeoutMs: 2000, issuanceTimeoutMs: 2000 };
const shortHandshake = { ...fast, handshakeTimeoutMs: 100 };
const shortChecks = { ...fast, validationTimeoutMs: 100, issuanceTimeoutMs: 100 };
// The fault fires 5-10 ms into the phase; the phase itself lasts 1 s (ended early by the abort), so
// even a CPU-starved event loop sees the fault before the phase could finish on its own.
const inVerification = { ...fast, validators: [slowValidator(1000)] };
const inEvidence = { ...fast, validators: [new DummyValidator()], issuer: slowIssuer(1000) };

// name, server fault, client options, accepted codes, phase the failure must name
const cases: [string, Fault, AtlsChannelOptions, AtlsErrorCode[], string][] = [
  ['reset on the ClientHello', { phase: 'accept', action: 'reset' }, fast, ['CONNECTION_LOST'], 'handshake'],
  ['close on the ClientHello', { phase: 'accept', action: 'close' }, fast, ['CONNECTION_LOST'], 'handshake'],
  ['silence after the ClientHello', { phase: 'accept', action: 'stall' }, shortHandshake, ['HANDSHAKE_TIMEOUT'], 'handshake'],
  ['plaintext alert answering the ClientHello', { phase: 'accept', action: 'alert' }, fast, ['TLS_ALERT'], 'handshake'],
  ['reset inside the handshake', { phase: 'handshake', action: 'reset' }, fast, ['CONNECTION_LOST'], 'handshake'],
  ['close inside the handshake', { phase: 'handshake', action: 'close' }, fast, ['CONNECTION_LOST'], 'handshake'],
  ['silence inside the handshake', { phase: 'handshake', action: 'stall' }, shortHandshake, ['HANDSHAKE_TIMEOUT'], 'handshake'],
  ['no_application_protocol alert inside the handshake', { phase: 'handshake', action: 'alert' }, fast, ['TLS_ALERT'], 'handshake'],
  ['reset while the client verifies the server', { phase: 'after-handshake', action: 'reset', delayMs: 5 }, inVerification, ['CONNECTION_LOST'], 'server-verification'],
  ['certificate_required alert while the client verifies', { phase: 'after-handshake', action: 'alert' }, inVerification, ['TLS_ALERT'], 'server-verification'],
  ['reset while the client issues its evidence', { phase: 'after-handshake', action: 'reset', delayMs: 10 }, inEvidence, ['CONNECTION_LOST'], 'client-evidence'],
  ['close while the client issues its evidence', { phase: 'after-handshake', action: 'close', delayMs: 10 }, inEvidence, ['CONNECTION_LOST'], 'client-evidence'],
  ['certificate_required alert while the client issues evidence', { phase: 'after-handshake', action: 'alert' }, { ...inEvidence, validators: [] }, ['TLS_ALERT'], 'client-evidence'],
  ['validator never answers', { phase: 'after-handshake', action: 'stall' }, { ...shortChecks, validators: [slowValidator(10_000)] }, ['VALIDATION_TIMEOUT'], 'server-verification'],
  ['issuer never answers', { phase: 'after-handshake', action: 'stall' }, { ...shortChecks, issuer: slowIssuer('forever') }, ['ISSUER_TIMEOUT'], 'client-evidence'],
];

describe('aTLS client under connection faults', () => {
  for (const [name, fault, options, codes, phase] of cases) {
    it(`${name}: typed ${codes.join('/')} in ${phase}, ${ITERATIONS} times, nothing unhandled`, async () => {
      unhandled = [];
      const server = await startFaultServer(fault);
      try {
        for (let i = 0; i < ITERATIONS; i++) {
          const res = await connectOnce(server.port, options);
          assert.notEqual(res, 'connected', `iteration ${i} connected`);
          const err = res as AtlsError;
          assert.ok(codes.includes(err.code), `iteration ${i}: ${err.reason}`);
          assert.equal(err.details.phase, phase, `iteration ${i}: ${err.reason}`);
          assert.equal(err.retryable, err.code !== 'TLS_ALERT');
        }
        await sleep(20); // late events (a reset after our own destroy) must not escape either
        assert.deepEqual(unhandled, []);
      } finally {
        await server.close();
      }
    });
  }

  it('a close after the handshake reaches grpc-js (not the connector) and stays handled', async () => {
    unhandled = [];
    const server = await startFaultServer({ phase: 'after-handshake', action: 'close', delayMs: 5 });
    try {
      for (let i = 0; i < ITERATIONS; i++) {
        const res = await connectOnce(server.port, inVerification);
        // The close_notify is read only when grpc-js starts HTTP/2, or during verification: both are fine.
        if (res !== 'connected') assert.equal(res.code, 'CONNECTION_LOST');
      }
      await sleep(20);
      assert.deepEqual(unhandled, []);
    } finally {
      await server.close();
    }
  });

  for (const [name, fault, reasonCode] of [
    ['client certificate required', { phase: 'after-handshake', action: 'alert' }, 'TLS_ALERT'],
    ['reset after the handshake', { phase: 'after-handshake', action: 'reset', delayMs: 5 }, 'CONNECTION_LOST'],
  ] as [string, Fault, AtlsErrorCode][]) {
    it(`gRPC call against a server with ${name}: UNAVAILABLE naming ${reasonCode}, channel keeps retrying`, async () => {
      unhandled = [];
      const server = await startFaultServer(fault);
      const client = new kms.APIClient(`127.0.0.1:${server.port}`, atlsChannelCredentials({ ...inVerification, issuer: new DummyIssuer() }), {
        'grpc.initial_reconnect_backoff_ms': 50,
        'grpc.max_reconnect_backoff_ms': 50,
      });
      try {
        const res = await getDataKey(client);
        assert.equal(res.ok, false);
        assert.equal(!res.ok && res.code, grpc.status.UNAVAILABLE);
        assert.match(!res.ok ? res.details : '', new RegExp(`\\[${reasonCode}\\]`));
        const before = server.accepted();
        await sleep(400);
        assert.ok(server.accepted() > before, 'the channel reconnects after a failed attempt');
        assert.deepEqual(unhandled, []);
      } finally {
        client.close();
        await server.close();
      }
    });
  }
});
