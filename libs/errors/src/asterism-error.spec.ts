import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AsterismError, errorMessage, isAsterismError } from './index.js';

class DemoError extends AsterismError<'A' | 'B'> {}

describe('AsterismError', () => {
  it('keeps code, details, name and cause', () => {
    const cause = new Error('root cause');
    const err = new DemoError('A', 'something failed', { details: { pcr: 15 }, cause });
    assert.equal(err.code, 'A');
    assert.equal(err.name, 'DemoError');
    assert.deepEqual(err.details, { pcr: 15 });
    assert.equal(err.cause, cause);
    assert.ok(err instanceof Error);
  });

  it('serialises the cause chain for logs', () => {
    const err = new DemoError('B', 'outer', { cause: new Error('middle', { cause: new Error('inner') }) });
    assert.deepEqual(err.toJSON(), { name: 'DemoError', code: 'B', message: 'outer', details: {}, causes: ['middle', 'inner'] });
  });

  it('details are frozen', () => {
    const err = new DemoError('A', 'x', { details: { a: 1 } });
    assert.throws(() => {
      (err.details as Record<string, unknown>).a = 2;
    });
  });

  it('isAsterismError filters by code', () => {
    const err = new DemoError('A', 'x');
    assert.equal(isAsterismError(err), true);
    assert.equal(isAsterismError(err, 'A'), true);
    assert.equal(isAsterismError(err, 'B'), false);
    assert.equal(isAsterismError(new Error('plain')), false);
  });

  it('errorMessage handles non-errors', () => {
    assert.equal(errorMessage(new Error('m')), 'm');
    assert.equal(errorMessage('s'), 's');
  });
});
