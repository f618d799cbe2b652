import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CryptoError } from './errors.js';
import { deriveKey, HKDF_MAX_LENGTH, HkdfSha256 } from './hkdf.js';

const range = (from: number, to: number) => Buffer.from(Array.from({ length: to - from + 1 }, (_, i) => from + i));
const fill = (byte: number, n = 32) => Buffer.alloc(n, byte);

describe('deriveKey (HKDF-SHA256)', () => {
  // RFC 5869 appendix A.1-A.3 and the reference's own vectors (docs/protocol/key-hierarchy.md).
  const vectors = [
    {
      name: 'RFC 5869 A.1',
      secret: fill(0x0b, 22),
      salt: range(0x00, 0x0c),
      info: range(0xf0, 0xf9),
      length: 42,
      out: '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
    },
    {
      name: 'RFC 5869 A.2',
      secret: range(0x00, 0x4f),
      salt: range(0x60, 0xaf),
      info: range(0xb0, 0xff),
      length: 82,
      out: 'b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87',
    },
    {
      name: 'RFC 5869 A.3 (empty salt and info)',
      secret: fill(0x0b, 22),
      salt: Buffer.alloc(0),
      info: Buffer.alloc(0),
      length: 42,
      out: '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8',
    },
    {
      name: 'HKDFZero',
      secret: fill(0x00),
      salt: fill(0x00),
      info: 'key-00000000-0000-0000-0000-000000000000',
      length: 32,
      out: '2b5c829f691bfd4232f8aac464bccc07e605c7c8e82cbca09837e86d0b6d0665',
    },
    {
      name: 'HKDF0xFF',
      secret: fill(0xff),
      salt: fill(0xff),
      info: 'key-ffffffff-ffff-ffff-ffff-ffffffffffff',
      length: 32,
      out: '1484aa39d3415e906e07940ff215d8b1eee705d3027dba93306af4abff4f70be',
    },
    {
      name: 'HKDFClusterID',
      secret: range(0x00, 0x1f),
      salt: range(0x20, 0x3f),
      info: 'key-clusterID',
      length: 32,
      out: '128c164378fe8767f998fbdfe4b4d6463ec5ae1b664ea5999bc27417607ae9b6',
    },
    {
      name: 'HKDFMeasurementSecret',
      secret: range(0x40, 0x5f),
      salt: range(0x60, 0x7f),
      info: 'key-measurementSecret',
      length: 32,
      out: '4790578891f3fe6cc22cb661ecdc1b7e33121b1287546a52ba33a9136719c213',
    },
  ];

  for (const v of vectors) {
    it(`matches vector ${v.name}`, () => {
      assert.equal(deriveKey(v.secret, v.salt, v.info, v.length).toString('hex'), v.out);
    });
    it(`HkdfSha256 (extract once) matches vector ${v.name}`, () => {
      assert.equal(new HkdfSha256(v.secret, v.salt).expand(v.info, v.length).toString('hex'), v.out);
    });
  }

  const lengths: Array<[string, number]> = [
    ['one byte', 1],
    ['one block minus one', 31],
    ['exactly one block', 32],
    ['one block plus one', 33],
    ['several blocks', 100],
    ['the maximum', HKDF_MAX_LENGTH],
  ];
  for (const [name, length] of lengths) {
    it(`HkdfSha256 equals node's hkdfSync for ${name} (${length} bytes)`, () => {
      const hkdf = new HkdfSha256(fill(7), fill(9, 40));
      assert.deepEqual(hkdf.expand('key-x', length), deriveKey(fill(7), fill(9, 40), 'key-x', length));
    });
  }

  it('HkdfSha256 rejects bad lengths and never prints its key', () => {
    const hkdf = new HkdfSha256(fill(1), fill(2));
    for (const bad of [0, -1, 1.5, HKDF_MAX_LENGTH + 1]) {
      assert.throws(() => hkdf.expand('x', bad), (e: unknown) => e instanceof CryptoError && e.code === 'KEY_LENGTH_INVALID');
    }
    assert.equal(JSON.stringify({ hkdf }), '{"hkdf":"[REDACTED]"}');
  });

  it('is deterministic and info-sensitive', () => {
    const a = deriveKey(fill(1), fill(2), 'key-a', 32);
    assert.deepEqual(deriveKey(fill(1), fill(2), 'key-a', 32), a);
    assert.notDeepEqual(deriveKey(fill(1), fill(2), 'key-A', 32), a);
    assert.equal(a.length, 32);
  });

  it('accepts the maximum length and rejects zero, negative, fractional and too long', () => {
    assert.equal(deriveKey(fill(1), fill(2), 'x', HKDF_MAX_LENGTH).length, 8160);
    for (const bad of [0, -1, 1.5, HKDF_MAX_LENGTH + 1, Number.NaN]) {
      assert.throws(() => deriveKey(fill(1), fill(2), 'x', bad), (e: unknown) => e instanceof CryptoError && e.code === 'KEY_LENGTH_INVALID');
    }
  });
});
