import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CryptoError } from './errors.js';
import {
  decodeBase64UrlPadded,
  encodeBase64UrlPadded,
  encodeClusterKmsUri,
  NO_STORE_URI,
  parseKmsUri,
  parseStorageUri,
} from './kms-uri.js';
import { randomBytes } from './random.js';

const isCode = (code: string) => (e: unknown) => e instanceof CryptoError && e.code === code;

describe('kms:// URIs', () => {
  it('round-trips random master secrets (TestMasterSecretURI)', () => {
    for (let i = 0; i < 50; i++) {
      const master = { key: randomBytes(32), salt: randomBytes(32) };
      const parsed = parseKmsUri(encodeClusterKmsUri(master));
      assert.equal(parsed.type, 'cluster-kms');
      if (parsed.type !== 'cluster-kms') return;
      assert.deepEqual(Buffer.from(parsed.masterSecret.key), master.key);
      assert.deepEqual(Buffer.from(parsed.masterSecret.salt), master.salt);
    }
  });

  it('uses the URL-safe alphabet with padding', () => {
    assert.equal(encodeBase64UrlPadded(Buffer.from([0xfb, 0xff])), '-_8=');
    assert.deepEqual(decodeBase64UrlPadded('-_8='), Buffer.from([0xfb, 0xff]));
  });

  it('accepts percent-escaped padding (values are unescaped after query parsing)', () => {
    const parsed = parseKmsUri('kms://cluster-kms?key=a2V5&salt=c2FsdA%3D%3D');
    assert.equal(parsed.type, 'cluster-kms');
    if (parsed.type === 'cluster-kms') {
      assert.equal(Buffer.from(parsed.masterSecret.key).toString(), 'key');
      assert.equal(Buffer.from(parsed.masterSecret.salt).toString(), 'salt');
    }
  });

  const bad: Array<[string, string, string]> = [
    ['unknown KMS (TestSetUpKMS)', 'kms://unknown', 'URI_UNKNOWN_KMS'],
    ['wrong scheme', 'storage://cluster-kms?key=AA==&salt=AA==', 'URI_INVALID'],
    ['not a URI', 'not a uri', 'URI_INVALID'],
    ['missing key', 'kms://cluster-kms?salt=AA==', 'URI_MISSING_PARAMETER'],
    ['empty salt', 'kms://cluster-kms?key=AA==&salt=', 'URI_MISSING_PARAMETER'],
    ['standard alphabet', 'kms://cluster-kms?key=-_8%3D&salt=%2B%2F8%3D', 'URI_INVALID'],
    ['missing padding', 'kms://cluster-kms?key=AA&salt=AA==', 'URI_INVALID'],
    ['aws without parameters', 'kms://aws?region=eu', 'URI_MISSING_PARAMETER'],
  ];
  for (const [name, uri, code] of bad) {
    it(`rejects ${name} with ${code}`, () => assert.throws(() => parseKmsUri(uri), isCode(code)));
  }

  it('names the missing parameter but never echoes values', () => {
    try {
      parseKmsUri('kms://cluster-kms?key=c2VjcmV0c2VjcmV0');
      assert.fail('expected an error');
    } catch (e) {
      assert.ok(e instanceof CryptoError);
      assert.equal(e.message, 'missing query parameter "salt"');
    }
  });
});

describe('storage:// URIs', () => {
  it('accepts no-store', () => assert.deepEqual(parseStorageUri(NO_STORE_URI), { type: 'no-store' }));
  it('rejects unknown storage (TestSetUpKMS)', () => assert.throws(() => parseStorageUri('storage://unknown'), isCode('URI_UNKNOWN_STORAGE')));
  it('parses cloud storage parameters', () => {
    assert.deepEqual(parseStorageUri('storage://gcp?projectID=p&bucket=b&credentialsPath=%2Fc'), {
      type: 'gcp',
      params: { projectID: 'p', bucket: 'b', credentialsPath: '/c' },
    });
  });
});
