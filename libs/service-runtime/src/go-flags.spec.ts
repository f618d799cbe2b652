import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeGoFlags } from './go-flags.js';

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
