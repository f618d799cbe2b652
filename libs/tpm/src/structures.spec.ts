import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { TPM_ALG, TPM_GENERATED_VALUE, TPM_ST } from './constants.js';
import { QuoteVerificationError, TpmParseError } from './errors.js';
import { Reader, tpm2b, u16, u32, u8 } from './marshal.js';
import { describeResponseCode } from './response-codes.js';
import { encodePcrSelection, readPcrSelection } from './structures/pcr-selection.js';
import { decodePublic, encodePublic, publicName, type TpmtPublic } from './structures/public.js';
import { encodeSignature } from './structures/signature.js';
import { akTemplateEcc, akTemplateRsa } from './templates.js';
import { verifyQuote } from './verify.js';

describe('AK templates (byte-identical to go-tpm-tools AKTemplateRSA / AKTemplateECC)', () => {
  it('RSA', () => {
    assert.equal(encodePublic(akTemplateRsa()).toString('hex'), '0001' + '000b' + '00050072' + '0000' + '0010' + '0014000b' + '0800' + '00000000' + '0000');
  });
  it('ECC (zero point of 2 x 32 bytes as unique)', () => {
    assert.equal(encodePublic(akTemplateEcc()).toString('hex'), '0023' + '000b' + '00050072' + '0000' + '0010' + '0018000b' + '0003' + '0010' + '0020' + '00'.repeat(32) + '0020' + '00'.repeat(32));
  });
  it('decode(encode(t)) == t', () => {
    for (const t of [akTemplateRsa(), akTemplateEcc()]) assert.deepEqual(decodePublic(encodePublic(t)), t);
  });
});

describe('TPML_PCR_SELECTION', () => {
  it('uses sizeofSelect 3 and a little-endian bitmap per byte', () => {
    assert.equal(encodePcrSelection([{ hashAlg: TPM_ALG.SHA256, pcrs: [0, 1, 15, 23] }]).toString('hex'), '00000001' + '000b' + '03' + '038080');
  });
  it('round-trips', () => {
    const sel = [{ hashAlg: TPM_ALG.SHA1, pcrs: [7] }, { hashAlg: TPM_ALG.SHA256, pcrs: [0, 8, 16] }];
    assert.deepEqual(readPcrSelection(new Reader(encodePcrSelection(sel), 't')), sel);
  });
  it('rejects absurd counts with a typed error', () => {
    assert.throws(() => readPcrSelection(new Reader(u32(0xffffffff), 't')), TpmParseError);
  });
});

describe('Reader', () => {
  it('reports truncation with the field and offset', () => {
    const r = new Reader(Buffer.from([0, 5, 1, 2]), 'TEST');
    assert.throws(() => r.tpm2b('blob'), (e: unknown) => e instanceof TpmParseError && /truncated at blob: need 5 bytes at offset 2, have 2/.test(e.message));
  });
});

describe('response codes', () => {
  const cases: Array<[number, string]> = [
    [0x000, 'TPM_RC_SUCCESS'],
    [0x100, 'TPM_RC_INITIALIZE'],
    [0x101, 'TPM_RC_FAILURE'],
    [0x98e, 'TPM_RC_AUTH_FAIL (session 1)'],
    [0x18b, 'TPM_RC_HANDLE (handle 1)'],
    [0x2c4, 'TPM_RC_VALUE (parameter 2)'],
    [0x922, 'TPM_RC_RETRY'],
    [0x902, 'TPM_RC_OBJECT_MEMORY'],
    [0x14a, 'TPM_RC_NV_UNINITIALIZED'],
    [0x1e, 'TPM12_RC_0x1e'],
    [0xa000a, 'TSS_LAYER_0xa(0xa)'],
  ];
  for (const [rc, text] of cases) it(`0x${rc.toString(16)} -> ${text}`, () => assert.equal(describeResponseCode(rc).text, text));
});

/** A software "TPM": signs a TPMS_ATTEST like a TPM would, so verification is testable without one. */
function fakeQuote(kind: 'ecc' | 'rsa', nonce: Buffer, pcrs: Map<number, Buffer>) {
  const sel = [...pcrs.keys()].sort((a, b) => a - b);
  const digest = createHash('sha256').update(Buffer.concat(sel.map((p) => pcrs.get(p)!))).digest();
  const attest = Buffer.concat([
    u32(TPM_GENERATED_VALUE), u16(TPM_ST.ATTEST_QUOTE), tpm2b(Buffer.alloc(34, 1)), tpm2b(nonce),
    Buffer.alloc(17), Buffer.alloc(8), encodePcrSelection([{ hashAlg: TPM_ALG.SHA256, pcrs: sel }]), tpm2b(digest),
  ]);
  if (kind === 'ecc') {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const sig = sign('sha256', attest, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    const ak: TpmtPublic = { ...(akTemplateEcc() as Extract<TpmtPublic, { type: 0x23 }>), x: Buffer.from(jwk.x!, 'base64url'), y: Buffer.from(jwk.y!, 'base64url') };
    // Strip a leading zero of r like a TPM does (variable-length TPM2B).
    const r = sig.subarray(0, 32);
    return { attest, ak, signature: encodeSignature({ sigAlg: TPM_ALG.ECDSA, hashAlg: TPM_ALG.SHA256, r: r[0] === 0 ? r.subarray(1) : r, s: sig.subarray(32) }) };
  }
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  const ak: TpmtPublic = { ...(akTemplateRsa() as Extract<TpmtPublic, { type: 0x1 }>), modulus: Buffer.from(jwk.n!, 'base64url') };
  return { attest, ak, signature: encodeSignature({ sigAlg: TPM_ALG.RSASSA, hashAlg: TPM_ALG.SHA256, signature: sign('sha256', attest, privateKey) }) };
}

describe('verifyQuote without a TPM', () => {
  const nonce = Buffer.alloc(32, 9);
  const pcrs = new Map([0, 1, 15].map((p) => [p, createHash('sha256').update(String(p)).digest()]));
  for (const kind of ['ecc', 'rsa'] as const) {
    const q = fakeQuote(kind, nonce, pcrs);
    const code = (c: string) => (e: unknown) => e instanceof QuoteVerificationError && e.code === c;
    it(`${kind}: accepts a correct quote`, () => {
      const a = verifyQuote({ akPublic: encodePublic(q.ak), attest: q.attest, signature: q.signature, nonce, pcrs });
      assert.deepEqual(a.extraData, nonce);
      assert.equal(publicName(q.ak).length, 34);
    });
    it(`${kind}: wrong nonce`, () => assert.throws(() => verifyQuote({ akPublic: q.ak, attest: q.attest, signature: q.signature, nonce: Buffer.alloc(32), pcrs }), code('QUOTE_NONCE_MISMATCH')));
    it(`${kind}: changed PCR value`, () => {
      const bad = new Map(pcrs).set(15, Buffer.alloc(32, 0xff));
      assert.throws(() => verifyQuote({ akPublic: q.ak, attest: q.attest, signature: q.signature, nonce, pcrs: bad }), code('QUOTE_PCR_DIGEST_MISMATCH'));
    });
    it(`${kind}: PCR set differs from the quoted selection`, () => {
      const bad = new Map(pcrs).set(2, Buffer.alloc(32));
      assert.throws(() => verifyQuote({ akPublic: q.ak, attest: q.attest, signature: q.signature, nonce, pcrs: bad }), code('QUOTE_PCR_SELECTION_MISMATCH'));
    });
    it(`${kind}: every single flipped bit of the attest is rejected`, () => {
      for (let bit = 0; bit < q.attest.length * 8; bit += 7) {
        const a = Buffer.from(q.attest);
        a[bit >> 3]! ^= 1 << (bit & 7);
        assert.throws(() => verifyQuote({ akPublic: q.ak, attest: a, signature: q.signature, nonce, pcrs }), QuoteVerificationError);
      }
    });
    it(`${kind}: other key`, () => {
      const other = fakeQuote(kind, nonce, pcrs);
      assert.throws(() => verifyQuote({ akPublic: other.ak, attest: q.attest, signature: q.signature, nonce, pcrs }), code('QUOTE_SIGNATURE_INVALID'));
    });
  }
  it('ECDSA signature with an RSA key is a signature failure', () => {
    const e = fakeQuote('ecc', nonce, pcrs);
    const r = fakeQuote('rsa', nonce, pcrs);
    assert.throws(() => verifyQuote({ akPublic: r.ak, attest: e.attest, signature: e.signature, nonce, pcrs }), /not an ECC key/);
  });
  it('malformed signature bytes are QUOTE_MALFORMED', () => {
    const e = fakeQuote('ecc', nonce, pcrs);
    assert.throws(() => verifyQuote({ akPublic: e.ak, attest: e.attest, signature: Buffer.concat([e.signature, u8(0)]), nonce, pcrs }), (x: unknown) => x instanceof QuoteVerificationError && x.code === 'QUOTE_MALFORMED');
  });
});
