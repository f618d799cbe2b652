import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goField, goFoldName, goJsonField } from './go-json.js';

// Expected values are what go1.26's json.Unmarshal stores into `struct{ Name string }` (or Kind /
// Last), measured with a throw-away Go program; see the module comment of go-json.ts.
describe('goField (Go encoding/json field binding)', () => {
  const cases: Array<[string, string, string, unknown]> = [
    ['exact key', '{"Name":"exact"}', 'Name', 'exact'],
    ['mixed-case key', '{"nAme":"mixed"}', 'Name', 'mixed'],
    ['exact then folded: the last wins', '{"Name":"exact","name":"lower"}', 'Name', 'lower'],
    ['folded then exact: the last wins', '{"name":"lower","Name":"exact"}', 'Name', 'exact'],
    ['two folded keys: the last wins', '{"NAME":"upper","name":"lower"}', 'Name', 'lower'],
    ['Kelvin sign folds to k', '{"\\u212aind":"kelvin"}', 'Kind', 'kelvin'],
    ['long s folds to s', '{"la\\u017ft":"longs"}', 'Last', 'longs'],
    ['absent', '{"Other":1}', 'Name', undefined],
    ['inherited names are not members', '{}', 'constructor', undefined],
  ];
  for (const [name, json, field, want] of cases) {
    it(name, () => assert.equal(goField(JSON.parse(json) as Record<string, unknown>, field), want));
  }

  it('works on token-preserving members (key, value, raw key) in document order', () => {
    const members: Array<[string, number, string]> = [
      ['Name', 1, '"Name"'],
      ['name', 2, '"name"'],
      ['Name', 3, '"Name"'],
    ];
    assert.equal(goJsonField(members, 'Name'), 3);
  });

  it('folds ASCII and non-ASCII names alike', () => {
    assert.equal(goFoldName('measurementSalt'), 'MEASUREMENTSALT');
    assert.equal(goFoldName('\u212a'), 'K');
    assert.equal(goFoldName('\u017f'), 'S');
  });
});
