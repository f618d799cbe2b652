import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TpmError } from './errors.js';
import {
  parseCreatePrimaryResponse,
  parseEmptyResponse,
  parseGetCapabilityResponse,
  parseNvReadPublicResponse,
  parseNvReadResponse,
  parsePcrEventResponse,
  parsePcrReadResponse,
  parseQuoteResponse,
  parseReadPublicResponse,
} from './responses.js';
import { decodeQuoteAttest } from './structures/attest.js';
import { decodePublic } from './structures/public.js';
import { decodeSignature } from './structures/signature.js';
import { verifyQuote } from './verify.js';

/** Real swtpm responses (regenerate with libs/tpm/scripts/record-responses.ts). */
const SEEDS = JSON.parse(readFileSync(join(import.meta.dirname, 'testdata', 'responses.json'), 'utf8')) as Record<string, string[]>;

const PARSERS: Record<string, (b: Buffer) => unknown> = {
  Startup: (b) => parseEmptyResponse(b, 'Startup'),
  GetCapability: parseGetCapabilityResponse,
  PCR_Read: parsePcrReadResponse,
  PCR_Extend: (b) => parseEmptyResponse(b, 'PCR_Extend'),
  PCR_Event: parsePcrEventResponse,
  CreatePrimary: parseCreatePrimaryResponse,
  ReadPublic: parseReadPublicResponse,
  Quote: parseQuoteResponse,
  FlushContext: (b) => parseEmptyResponse(b, 'FlushContext'),
  NV_ReadPublic: parseNvReadPublicResponse,
  NV_Read: parseNvReadResponse,
};

/** Runs `parse`; only TpmError may escape. Returns whether it parsed. */
function parsesOrTypedError(parse: (b: Buffer) => unknown, input: Buffer): boolean {
  try {
    parse(input);
    return true;
  } catch (err) {
    if (!(err instanceof TpmError)) {
      assert.fail(`untyped ${(err as Error)?.constructor?.name}: ${(err as Error)?.message} for input ${input.toString('hex')}`);
    }
    assert.ok(err.code.length > 0 && err.message.length > 0);
    return false;
  }
}

/** A mutation of a seed: truncation, byte flips, insertion/deletion; optionally with the size field fixed up. */
const mutation = (seed: Buffer) =>
  fc
    .record({
      kind: fc.constantFrom('truncate', 'flip', 'set', 'insert', 'delete'),
      pos: fc.nat({ max: Math.max(0, seed.length - 1) }),
      value: fc.integer({ min: 0, max: 255 }),
      count: fc.integer({ min: 1, max: 8 }),
      fixSize: fc.boolean(),
    })
    .map(({ kind, pos, value, count, fixSize }) => {
      let b = Buffer.from(seed);
      if (kind === 'truncate') b = b.subarray(0, pos);
      else if (kind === 'flip') for (let i = 0; i < count && pos + i < b.length; i++) b[pos + i]! ^= 1 << ((value + i) & 7);
      else if (kind === 'set') for (let i = 0; i < count && pos + i < b.length; i++) b[pos + i] = value;
      else if (kind === 'insert') b = Buffer.concat([b.subarray(0, pos), Buffer.alloc(count, value), b.subarray(pos)]);
      else b = Buffer.concat([b.subarray(0, pos), b.subarray(pos + count)]);
      if (fixSize && b.length >= 6) b.writeUInt32BE(b.length, 2);
      return b;
    });

describe('response parsers under truncated and mutated input (fuzz)', () => {
  it('every recorded seed parses with its own parser (or is a TPM error response)', () => {
    for (const [name, seeds] of Object.entries(SEEDS)) {
      const parse = PARSERS[name];
      if (!parse) continue;
      for (const hex of seeds) parsesOrTypedError(parse, Buffer.from(hex, 'hex'));
    }
    assert.ok(parsesOrTypedError(PARSERS.Quote!, Buffer.from(SEEDS.Quote!.at(-1)!, 'hex')));
  });

  let total = 0;
  for (const [name, seeds] of Object.entries(SEEDS)) {
    it(`${name}: no truncation of any seed crashes`, () => {
      for (const hex of seeds) {
        const seed = Buffer.from(hex, 'hex');
        for (const parse of name === 'NV_Mixed' ? Object.values(PARSERS) : [PARSERS[name]!]) {
          for (let len = 0; len < seed.length; len++) {
            const b = Buffer.from(seed.subarray(0, len));
            if (b.length >= 6) b.writeUInt32BE(b.length, 2);
            parsesOrTypedError(parse, b);
            total++;
          }
        }
      }
    });

    it(`${name}: 600 random mutations never crash`, () => {
      const parsers = name === 'NV_Mixed' ? Object.values(PARSERS) : [PARSERS[name]!];
      fc.assert(
        fc.property(
          fc.constantFrom(...seeds).chain((hex) => mutation(Buffer.from(hex, 'hex'))),
          fc.constantFrom(...parsers),
          (input, parse) => {
            parsesOrTypedError(parse, input);
            total++;
          },
        ),
        { numRuns: 600, seed: 42 },
      );
    });
  }

  it('random bytes into every parser and structure decoder', () => {
    const decoders = [...Object.values(PARSERS), decodePublic, decodeSignature, decodeQuoteAttest];
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(...decoders), (bytes, parse) => {
        parsesOrTypedError(parse, Buffer.from(bytes));
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it('verifyQuote rejects mutated quotes with typed errors only', () => {
    const quote = parseQuoteResponse(Buffer.from(SEEDS.Quote!.find((h) => parsesOrTypedError(PARSERS.Quote!, Buffer.from(h, 'hex')))!, 'hex'));
    const ak = parseCreatePrimaryResponse(Buffer.from(SEEDS.CreatePrimary![0]!, 'hex'));
    fc.assert(
      fc.property(fc.constantFrom('attest', 'signature', 'ak'), mutation(quote.attestBytes), mutation(quote.signatureBytes), mutation(ak.publicBytes), (which, attest, sig, akBytes) => {
        const input = {
          akPublic: which === 'ak' ? akBytes : ak.publicBytes,
          attest: which === 'attest' ? attest : quote.attestBytes,
          signature: which === 'signature' ? sig : quote.signatureBytes,
          nonce: quote.attest.extraData,
          pcrs: new Map([0, 1, 2, 15, 23].map((p) => [p, Buffer.alloc(32)])),
        };
        parsesOrTypedError(() => verifyQuote(input), Buffer.alloc(0));
      }),
      { numRuns: 1500, seed: 3 },
    );
  });

  it('ran thousands of cases', () => {
    assert.ok(total > 5000, `only ${total} cases`);
  });
});
