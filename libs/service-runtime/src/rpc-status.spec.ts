import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { AsterismError } from '@asterism/errors';
import { fromStatus, goStatusText, REASON_METADATA, RpcError, toStatus, type ToStatusOptions } from './rpc-status.js';

class DemoError extends AsterismError<'BAD_INPUT' | 'BUSY' | 'BROKEN' | 'UNLISTED'> {}

const TABLE = { BAD_INPUT: grpc.status.INVALID_ARGUMENT, BUSY: grpc.status.UNAVAILABLE, BROKEN: grpc.status.INTERNAL };

describe('toStatus', () => {
  const cases: [string, unknown, ToStatusOptions, { code: grpc.status; details: string; internal: boolean }][] = [
    ['listed client error keeps its message', new DemoError('BAD_INPUT', 'name is empty'), {}, { code: grpc.status.INVALID_ARGUMENT, details: 'name is empty', internal: false }],
    ['listed transient error', new DemoError('BUSY', 'backend down'), {}, { code: grpc.status.UNAVAILABLE, details: 'backend down', internal: false }],
    ['code mapped to INTERNAL hides the message', new DemoError('BROKEN', 'reading /etc/secret-path failed'), {}, { code: grpc.status.INTERNAL, details: 'internal error', internal: true }],
    ['code missing from the table is internal', new DemoError('UNLISTED', 'detail'), {}, { code: grpc.status.INTERNAL, details: 'internal error', internal: true }],
    ['plain Error is internal', new Error('ECONNRESET 10.0.0.7'), {}, { code: grpc.status.INTERNAL, details: 'internal error', internal: true }],
    ['non-error value is internal', 'boom', {}, { code: grpc.status.INTERNAL, details: 'internal error', internal: true }],
    ['prototype key is not a table entry', new AsterismError('toString', 'x'), {}, { code: grpc.status.INTERNAL, details: 'internal error', internal: true }],
    ['ref names the log id', new Error('x'), { ref: 'join-42' }, { code: grpc.status.INTERNAL, details: 'internal error (ref join-42)', internal: true }],
    ['revealInternal sends the cause message', new Error('setting up disk: no device'), { revealInternal: true }, { code: grpc.status.INTERNAL, details: 'setting up disk: no device', internal: true }],
    ['revealInternal does not change a listed error', new DemoError('BAD_INPUT', 'bad'), { revealInternal: true }, { code: grpc.status.INVALID_ARGUMENT, details: 'bad', internal: false }],
  ];
  for (const [name, err, options, want] of cases) {
    it(name, () => {
      const { metadata, ...status } = toStatus(err, TABLE, options);
      assert.deepEqual(status, want);
      // Domain errors carry their code as the reason; internal causes carry none.
      assert.deepEqual(metadata.get(REASON_METADATA), want.internal ? [] : [(err as DemoError).code]);
    });
  }

  it('adds the reason to the caller\'s metadata and uses describe for the text', () => {
    const md = new grpc.Metadata();
    md.set('x-join-id', 'j-1');
    const status = toStatus(new DemoError('BAD_INPUT', 'name is empty'), TABLE, { metadata: md, describe: (e) => `[${e.code}] ${e.message}` });
    assert.equal(status.metadata, md);
    assert.deepEqual(md.get('x-join-id'), ['j-1']);
    assert.deepEqual(md.get(REASON_METADATA), ['BAD_INPUT']);
    assert.equal(status.details, '[BAD_INPUT] name is empty');
  });
});

/** A client-side failure as grpc-js hands it to a callback. */
function serviceError(code: grpc.status, details: string, reason?: string): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  if (reason !== undefined) metadata.set(REASON_METADATA, reason);
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

describe('fromStatus', () => {
  it('restores a known reason from the metadata, not from the text', () => {
    const err = fromStatus(serviceError(grpc.status.PERMISSION_DENIED, 'mentions ATTESTATION_INVALID', 'INIT_SECRET_INVALID'), ['INIT_SECRET_INVALID', 'ATTESTATION_INVALID']);
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, 'INIT_SECRET_INVALID');
    assert.equal(err.reason, 'INIT_SECRET_INVALID');
    assert.equal(err.status, grpc.status.PERMISSION_DENIED);
    assert.equal(err.statusDetails, 'mentions ATTESTATION_INVALID');
    assert.equal(err.retryable, false);
  });

  it('a status without a reason is named by its code, whatever the text says', () => {
    const err = fromStatus(serviceError(grpc.status.UNAVAILABLE, '[ATTESTATION_INVALID] no'), ['ATTESTATION_INVALID']);
    assert.equal(err.code, 'UNAVAILABLE');
    assert.equal(err.reason, undefined);
    assert.equal(err.retryable, true);
  });

  it('a reason the client does not know is not restored', () => {
    const err = fromStatus(serviceError(grpc.status.INVALID_ARGUMENT, 'x', 'SOMETHING_NEW'), ['INVALID_REQUEST']);
    assert.equal(err.code, 'INVALID_ARGUMENT');
    assert.equal(err.reason, undefined);
  });

  it('round-trips toStatus: the reason a server sends is the code its client restores', () => {
    const status = toStatus(new DemoError('BUSY', 'backend down'), TABLE);
    const err = fromStatus(serviceError(status.code, status.details, status.metadata.get(REASON_METADATA)[0] as string), ['BUSY']);
    assert.equal(err.code, 'BUSY');
    assert.equal(err.statusDetails, 'backend down');
    // The message is grpc-js's rendering, as clients printed it before.
    assert.equal(err.message, `${grpc.status.UNAVAILABLE} UNAVAILABLE: backend down`);
  });

  it('a non-status failure becomes UNKNOWN with its cause kept; an RpcError passes through', () => {
    const local = new Error('socket hang up');
    const err = fromStatus(local);
    assert.equal(err.code, 'UNKNOWN');
    assert.equal(err.cause, local);
    assert.equal(fromStatus(err), err);
  });
});

describe('goStatusText', () => {
  const cases: [string, grpc.status, string][] = [
    ['single word', grpc.status.INTERNAL, 'rpc error: code = Internal desc = d'],
    ['two words', grpc.status.FAILED_PRECONDITION, 'rpc error: code = FailedPrecondition desc = d'],
    ['three words', grpc.status.PERMISSION_DENIED, 'rpc error: code = PermissionDenied desc = d'],
  ];
  for (const [name, code, want] of cases) it(name, () => assert.equal(goStatusText(code, 'd'), want));
});
