import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonParser, type JsonNode } from './json-tree.js';

const parse = (text: string): JsonNode => new JsonParser(text).parse();

describe('JsonParser strings', () => {
  // Every escape form next to the closing quote, where a quote search could stop too early or late.
  const valid: Array<[string, string, string]> = [
    ['plain', '"abc"', 'abc'],
    ['empty', '""', ''],
    ['escaped quote inside', '"a\\"b"', 'a"b'],
    ['escaped backslash before the closing quote', '"a\\\\"', 'a\\'],
    ['escaped backslash then escaped quote', '"a\\\\\\"b"', 'a\\"b'],
    ['two escaped backslashes at the end', '"a\\\\\\\\"', 'a\\\\'],
    ['unicode escape', '"\\u0041\\u00e9"', 'Aé'],
    ['non-ASCII text', '"\u2028é😀"', '\u2028é😀'],
    ['long base64 run', `"${'QUJD'.repeat(5000)}"`, 'QUJD'.repeat(5000)],
  ];
  for (const [name, text, value] of valid) {
    it(`reads ${name} and keeps its source text`, () => {
      const node = parse(text);
      assert.deepEqual(node, { kind: 'string', value, raw: text });
      assert.equal(node.kind === 'string' && node.value, JSON.parse(text));
    });
  }

  it('finds the end of each string among several (keys, arrays)', () => {
    const node = parse('{"k\\"":["a","b\\\\",""],"x":"y"}');
    assert.equal(node.kind, 'object');
    const entries = node.kind === 'object' ? node.entries : [];
    assert.deepEqual(
      entries.map(([k, v]) => [k, v.kind === 'array' ? v.items.map((i) => (i.kind === 'string' ? i.value : '?')) : v.kind === 'string' ? v.value : '?']),
      [
        ['k"', ['a', 'b\\', '']],
        ['x', 'y'],
      ],
    );
  });

  const invalid: Array<[string, string, string]> = [
    ['a control character', '"a\u0001b"', 'control character in string at offset 2'],
    ['an escaped control character', '"a\\\u0001b"', 'invalid escape in string at offset 6'],
    ['an unknown escape', '"\\x"', 'invalid escape in string at offset 4'],
    ['no closing quote', '"abc', 'unterminated string at offset 4'],
    ['only an escaped quote at the end', '"ab\\"', 'unterminated string at offset 5'],
    ['a trailing backslash', '"abc\\', 'unterminated string at offset 6'],
    ['a lone quote', '"', 'unterminated string at offset 1'],
  ];
  for (const [name, text, message] of invalid) {
    it(`refuses ${name} with its offset`, () => assert.throws(() => parse(text), (err: Error) => err.message === message));
  }
});
