import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { AsterismError } from '@asterism/errors';
import { goStatusText, toStatus, type ToStatusOptions } from './rpc-status.js';

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
    it(name, () => assert.deepEqual(toStatus(err, TABLE, options), want));
  }
});

describe('goStatusText', () => {
  const cases: [string, grpc.status, string][] = [
    ['single word', grpc.status.INTERNAL, 'rpc error: code = Internal desc = d'],
    ['two words', grpc.status.FAILED_PRECONDITION, 'rpc error: code = FailedPrecondition desc = d'],
    ['three words', grpc.status.PERMISSION_DENIED, 'rpc error: code = PermissionDenied desc = d'],
  ];
  for (const [name, code, want] of cases) it(name, () => assert.equal(goStatusText(code, 'd'), want));
});
