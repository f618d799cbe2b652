import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AttestationError } from '../errors.js';
import { parseTdxQuote } from './quote.js';
import { tdxVector, VECTOR_OFFSETS } from './vectors.fixture.js';

const quote = tdxVector('quote-v4-spr.dat');

function patch16(offset: number, value: number, from = quote): Buffer {
  const out = Buffer.from(from);
  out.writeUInt16LE(value, offset);
  return out;
}

function patch32(offset: number, value: number): Buffer {
  const out = Buffer.from(quote);
  out.writeUInt32LE(value, offset);
  return out;
}

describe('parseTdxQuote (real production quote v4)', () => {
  it('parses header, body, signature data, QE report and PCK chain', () => {
    const q = parseTdxQuote(quote);
    assert.deepEqual([q.header.version, q.header.attestationKeyType, q.header.teeType, q.bodyType], [4, 2, 0x81, 2]);
    assert.equal(q.header.qeVendorId.toString('hex'), '939a7233f79c4ca9940a0db3957f0607');
    assert.equal(q.body.teeTcbSvn.toString('hex'), '03000400000000000000000000000000');
    assert.equal(q.body.mrTd.length, 48);
    assert.equal(q.body.xfam.toString('hex'), 'e71a060000000000');
    assert.equal(q.signedBytes.length, 632);
    assert.deepEqual([q.qeReport.isvProdId, q.qeReport.isvSvn], [2, 4]);
    assert.equal(q.qeAuthData.length, 32);
    assert.equal(q.pckChainPem.match(/BEGIN CERTIFICATE/g)?.length, 3);
    assert.equal(q.trailingLength, 39);
  });

  it('parses a v5 quote with a TDX 1.0 body descriptor into the same body', () => {
    const v5 = Buffer.concat([quote.subarray(0, 48), Buffer.from([2, 0, 0x48, 0x02, 0, 0]), quote.subarray(48)]);
    v5.writeUInt16LE(5, 0);
    const q = parseTdxQuote(v5);
    assert.equal(q.header.version, 5);
    assert.ok(q.body.reportData.equals(parseTdxQuote(quote).body.reportData));
    assert.equal(q.signedBytes.length, 638);
  });

  const cases: { name: string; bytes: Buffer; field: string }[] = [
    { name: 'version 3', bytes: patch16(0, 3), field: 'version' },
    { name: 'attestation key type 3 (P-384)', bytes: patch16(2, 3), field: 'attestation key type' },
    { name: 'TEE type SGX (0)', bytes: patch16(4, 0), field: 'TEE type' },
    { name: 'truncated header', bytes: quote.subarray(0, 40), field: 'user data' },
    { name: 'truncated body', bytes: quote.subarray(0, 300), field: 'MROWNER' },
    { name: 'signature data length past the end', bytes: quote.subarray(0, 1000), field: 'signature data' },
    { name: 'certification data type 5 at the outer level', bytes: patch16(VECTOR_OFFSETS.qeReport - 6, 5), field: 'certification data type' },
    { name: 'inner certification data type 6', bytes: patch16(VECTOR_OFFSETS.pckChain - 6, 6), field: 'PCK certification data type' },
    { name: 'PCK certification data size one byte short', bytes: patch32(VECTOR_OFFSETS.pckChain - 4, 0xe5c), field: 'QE report certification data' },
    { name: 'QE auth data size past the end', bytes: patch16(VECTOR_OFFSETS.qeAuthData - 2, 0xffff), field: 'QE auth data' },
  ];
  for (const c of cases) {
    it(`refuses ${c.name} with QUOTE_INVALID naming ${c.field}`, () =>
      assert.throws(() => parseTdxQuote(c.bytes), (err: AttestationError) => err instanceof AttestationError && err.code === 'QUOTE_INVALID' && err.details.field === c.field));
  }
});

describe('parseTdxQuote fuzzing: only AttestationErrors escape', () => {
  const onlyTyped = (bytes: Uint8Array) => {
    try {
      parseTdxQuote(bytes);
    } catch (err) {
      if (!(err instanceof AttestationError)) throw err;
    }
  };
  // Mutations keep the structure mostly intact so the parser gets deep; the length fields are the
  // interesting targets (signature data length, certification data sizes, QE auth data size).
  const lengthFields = [0, 2, 4, 632, 633, 634, 635, VECTOR_OFFSETS.qeReport - 4, VECTOR_OFFSETS.qeReport - 3, VECTOR_OFFSETS.qeAuthData - 2, VECTOR_OFFSETS.qeAuthData - 1, VECTOR_OFFSETS.pckChain - 4, VECTOR_OFFSETS.pckChain - 3];
  it('100,000 mutations of the real quote (length-field and random byte overwrites, truncations)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: quote.length }),
        fc.oneof(fc.constantFrom(...lengthFields), fc.integer({ min: 0, max: quote.length - 1 })),
        fc.integer({ min: 0, max: 255 }),
        (len, offset, value) => {
          const b = Buffer.from(quote.subarray(0, len));
          if (offset < b.length) b[offset] = value;
          onlyTyped(b);
        },
      ),
      { numRuns: 100_000 },
    );
  });
  it('arbitrary bytes with a valid v4/v5 TDX prefix', () =>
    fc.assert(
      fc.property(fc.constantFrom(4, 5), fc.uint8Array({ maxLength: 1500 }), (version, tail) => {
        const head = Buffer.from([version, 0, 2, 0, 0x81, 0, 0, 0]);
        onlyTyped(Buffer.concat([head, tail]));
      }),
      { numRuns: 5_000 },
    ));
});
