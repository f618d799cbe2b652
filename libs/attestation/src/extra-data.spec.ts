import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { compareExtraData, makeExtraData, makeTpmNonce } from './extra-data.js';

const hex = (s: string) => Buffer.from(s, 'hex');

describe('makeExtraData', () => {
  it('is SHA256(userData || nonce)', () => {
    const want = createHash('sha256').update(Buffer.from('Constellation01020304', 'latin1')).digest();
    assert.deepEqual(makeExtraData(Buffer.from('Constellation0102', 'latin1'), Buffer.from('0304', 'latin1')), want);
  });

  it('is 32 bytes for empty inputs', () => {
    assert.equal(makeExtraData(new Uint8Array(0), new Uint8Array(0)).toString('hex'), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('makeTpmNonce', () => {
  it('treats null instance info as empty', () => {
    const extra = Buffer.alloc(32, 7);
    assert.deepEqual(makeTpmNonce(null, extra), createHash('sha256').update(extra).digest());
    assert.deepEqual(makeTpmNonce(Buffer.from('ii'), extra), createHash('sha256').update('ii').update(extra).digest());
  });
});

describe('compareExtraData (TestCompareExtraData)', () => {
  const ab32 = Buffer.alloc(32, 0xab);
  const ab64 = Buffer.alloc(64, 0xab);
  const cases: Array<[string, Buffer, Buffer, boolean]> = [
    ['equal', hex('abababab'), hex('abababab'), true],
    ['different bytes', hex('abababab'), hex('abababac'), false],
    ['32 vs 64 bytes of AB', ab32, ab64, false],
    ['zero-padded right', hex('abababab'), hex('abababab00000000'), true],
    ['zero-padded left', hex('00000000abababab'), hex('abababab'), false],
    ['both empty', Buffer.alloc(0), Buffer.alloc(0), true],
    ['empty vs zeros', Buffer.alloc(0), Buffer.alloc(64), true],
    ['empty vs non-zero', Buffer.alloc(0), hex('01'), false],
  ];
  for (const [name, a, b, want] of cases) {
    it(`${name} (a, b)`, () => assert.equal(compareExtraData(a, b), want));
    it(`${name} (b, a)`, () => assert.equal(compareExtraData(b, a), want));
  }
});
