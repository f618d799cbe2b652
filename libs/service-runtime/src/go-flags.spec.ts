import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError } from './cli-flags.js';
import { normalizeGoFlags, parseGoFlags } from './go-flags.js';

describe('normalizeGoFlags', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['single-dash long flag with value', ['-port=9000'], ['--port=9000']],
    ['negative number after a flag', ['-v', '-1'], ['--v=-1']],
    ['double-dash negative', ['--v', '-2'], ['--v=-2']],
    ['plain values untouched', ['--salt', '/s', '-v', '2'], ['--salt', '/s', '--v', '2']],
    ['-h stays short', ['-h'], ['-h']],
    ['after -- nothing changes', ['--', '-v', '-1'], ['--', '-v', '-1']],
  ];
  for (const [name, input, expected] of cases) it(name, () => assert.deepEqual(normalizeGoFlags(input), expected));
});

describe('parseGoFlags', () => {
  const options = { port: { type: 'string' }, v: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

  it('reads Go-style flags into values', () => {
    assert.deepEqual({ ...parseGoFlags(['-port=9000', '-v', '-1'], options) }, { port: '9000', v: '-1' });
    assert.deepEqual({ ...parseGoFlags(['-h'], options) }, { help: true });
  });

  const refusals: Array<[string, string[], RegExp]> = [
    ['unknown flag', ['--nope'], /Unknown option '--nope'/],
    ['positional argument', ['extra'], /Unexpected argument 'extra'/],
    ['string flag without a value', ['--port'], /--port <value>' argument missing/],
  ];
  for (const [name, argv, message] of refusals) {
    it(`${name} is a FlagError with parseArgs' message`, () => {
      assert.throws(() => parseGoFlags(argv, options), (err: unknown) => err instanceof FlagError && message.test(err.message));
    });
  }
});
