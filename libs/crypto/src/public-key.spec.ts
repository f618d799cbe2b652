import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { publicKeyFromSpki } from './public-key.js';

const spkiOf = (k: ReturnType<typeof generateKeyPairSync>) => k.publicKey.export({ format: 'der', type: 'spki' });
const derImport = (spki: Buffer) => createPublicKey({ key: spki, format: 'der', type: 'spki' });

describe('publicKeyFromSpki', () => {
  const cases: Array<[string, () => ReturnType<typeof generateKeyPairSync>, string | null]> = [
    ['P-256 (JWK path)', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }), 'sha256'],
    ['P-384 (JWK path)', () => generateKeyPairSync('ec', { namedCurve: 'P-384' }), 'sha384'],
    ['Ed25519 (JWK path)', () => generateKeyPairSync('ed25519'), null],
    ['P-521 (DER path)', () => generateKeyPairSync('ec', { namedCurve: 'P-521' }), 'sha512'],
    ['RSA 2048 (DER path)', () => generateKeyPairSync('rsa', { modulusLength: 2048 }), 'sha256'],
  ];
  for (const [name, make, hash] of cases) {
    it(`${name}: the same key as DER import, and it verifies the key pair's signatures`, () => {
      const pair = make();
      const spki = spkiOf(pair);
      const key = publicKeyFromSpki(spki);
      assert.deepEqual(key.export({ format: 'der', type: 'spki' }), spki);
      assert.equal(key.asymmetricKeyType, derImport(spki).asymmetricKeyType);
      const data = Buffer.from('signed by the pair');
      assert.equal(verify(hash, data, key, sign(hash, data, pair.privateKey)), true);
    });
  }

  it('accepts a SPKI inside a larger buffer (a certificate or CSR it was sliced from)', () => {
    const spki = spkiOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }));
    const outer = Buffer.concat([Buffer.from('prefix'), spki, Buffer.from('suffix')]);
    assert.deepEqual(publicKeyFromSpki(outer.subarray(6, 6 + spki.length)).export({ format: 'der', type: 'spki' }), spki);
  });

  const bad: Array<[string, (spki: Buffer) => Buffer]> = [
    ['a P-256 point that is not on the curve', (s) => Buffer.concat([s.subarray(0, -1), Buffer.from([s.at(-1)! ^ 1])])],
    ['a truncated P-256 SPKI', (s) => s.subarray(0, -1)],
    ['an empty buffer', () => Buffer.alloc(0)],
  ];
  for (const [name, mangle] of bad) {
    it(`refuses ${name}, as DER import does`, () => {
      const spki = mangle(spkiOf(generateKeyPairSync('ec', { namedCurve: 'P-256' })));
      assert.throws(() => derImport(spki));
      assert.throws(() => publicKeyFromSpki(spki));
    });
  }
});
