import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AttestationError } from '../errors.js';
import { HASH_ALG } from './document.js';
import { EV_NO_ACTION, EV_SEPARATOR, parseEventLog, replayEventLog, verifyEventLogAgainstPcrs } from './event-log.js';

/** The 69-byte header of docs/protocol/vtpm-attestation.md: SHA-1 and SHA-256 banks, no events. */
const MINIMAL_HEADER = Buffer.from(
  '000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000',
  'hex',
);

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const sha = (alg: string, ...parts: Buffer[]) => parts.reduce((h, p) => h.update(p), createHash(alg)).digest();

/** A TCG_PCR_EVENT2 record with SHA-1 and SHA-256 digests of `data`. */
function event2(pcr: number, type: number, data: Buffer, digests: Array<[number, Buffer]> = [[HASH_ALG.SHA1, sha('sha1', data)], [HASH_ALG.SHA256, sha('sha256', data)]]): Buffer {
  return Buffer.concat([u32(pcr), u32(type), u32(digests.length), ...digests.flatMap(([alg, d]) => [u16(alg), d]), u32(data.length), data]);
}

/** A legacy SHA-1-format record. */
const sha1Event = (pcr: number, type: number, data: Buffer) => Buffer.concat([u32(pcr), u32(type), sha('sha1', data), u32(data.length), data]);

const locality = (l: number) => event2(0, EV_NO_ACTION, Buffer.concat([Buffer.from('StartupLocality\0', 'latin1'), Buffer.from([l])]), [
  [HASH_ALG.SHA1, Buffer.alloc(20)],
  [HASH_ALG.SHA256, Buffer.alloc(32)],
]);

/** Expected PCR value after extending `datas` (by their hashes) from `init`. */
function extend(alg: string, init: Buffer, ...datas: Buffer[]): Buffer {
  return datas.reduce((pcr, d) => sha(alg, pcr, sha(alg, d)), init);
}

const A = Buffer.from('firmware');
const B = Buffer.from('bootloader');
const SEP = Buffer.alloc(4);
const LOG = Buffer.concat([MINIMAL_HEADER, event2(0, 1, A), event2(4, 0x80000003, B), event2(0, EV_SEPARATOR, SEP), event2(4, EV_NO_ACTION, Buffer.from('ignored')), event2(7, EV_SEPARATOR, SEP)]);
const want256 = new Map([
  [0, extend('sha256', Buffer.alloc(32), A, SEP)],
  [4, extend('sha256', Buffer.alloc(32), B)],
  [7, extend('sha256', Buffer.alloc(32), SEP)],
]);

const code = (c: string, msg = '') => (e: unknown) => e instanceof AttestationError && e.code === c && e.message.includes(msg);

describe('parseEventLog', () => {
  it('parses the 69-byte minimal header (Appendix A)', () => {
    assert.equal(MINIMAL_HEADER.length, 69);
    const log = parseEventLog(MINIMAL_HEADER);
    assert.deepEqual(log.algorithms, [
      { algId: HASH_ALG.SHA1, digestSize: 20 },
      { algId: HASH_ALG.SHA256, digestSize: 32 },
    ]);
    assert.equal(log.events.length, 0);
    assert.deepEqual([log.specId!.specVersionMajor, log.specId!.specVersionMinor, log.specId!.uintnSize, log.specId!.vendorInfo.length], [2, 0, 2, 0]);
  });

  it('parses events after the header', () => {
    const log = parseEventLog(LOG);
    assert.deepEqual(
      log.events.map((e) => [e.sequence, e.pcr, e.type]),
      [
        [0, 0, 1],
        [1, 4, 0x80000003],
        [2, 0, EV_SEPARATOR],
        [3, 4, EV_NO_ACTION],
        [4, 7, EV_SEPARATOR],
      ],
    );
    assert.ok(log.events[1]!.data.equals(B));
    assert.ok(log.events[1]!.digests.get(HASH_ALG.SHA256)!.equals(sha('sha256', B)));
  });

  it('parses a legacy SHA-1 log', () => {
    const log = parseEventLog(Buffer.concat([sha1Event(0, 8, A), sha1Event(1, 1, B)]));
    assert.equal(log.specId, null);
    assert.equal(log.events.length, 2);
    assert.ok(replayEventLog(log, HASH_ALG.SHA1).get(0)!.equals(extend('sha1', Buffer.alloc(20), A)));
    assert.throws(() => replayEventLog(log, HASH_ALG.SHA256), code('EVENT_LOG_INVALID', 'no SHA256 digests'));
  });

  const header = (algs: Array<[number, number]>, count = algs.length) => {
    const body = Buffer.concat([Buffer.from('Spec ID Event03\0', 'latin1'), u32(0), Buffer.from([0, 2, 0, 2]), u32(count), ...algs.flatMap(([a, s]) => [u16(a), u16(s)]), Buffer.from([0])]);
    return Buffer.concat([u32(0), u32(EV_NO_ACTION), Buffer.alloc(20), u32(body.length), body]);
  };
  const bad: Array<[string, Buffer, string]> = [
    ['empty', Buffer.alloc(0), 'empty'],
    ['header cut short', MINIMAL_HEADER.subarray(0, 40), 'truncated'],
    ['header missing its last byte', MINIMAL_HEADER.subarray(0, 68), 'truncated'],
    ['event cut in its digest', Buffer.concat([MINIMAL_HEADER, event2(0, 1, A).subarray(0, 30)]), 'truncated event digest'],
    ['event cut in its data', Buffer.concat([MINIMAL_HEADER, event2(0, 1, A).subarray(0, -1)]), 'truncated event data'],
    ['trailing partial record', Buffer.concat([LOG, Buffer.from([1, 2])]), 'truncated'],
    ['huge event size', Buffer.concat([MINIMAL_HEADER, u32(0), u32(1), u32(0), u32(0xffffffff)]), 'truncated event data'],
    ['too many digests', Buffer.concat([MINIMAL_HEADER, u32(0), u32(1), u32(3)]), 'has 3 digests'],
    ['undeclared algorithm', Buffer.concat([MINIMAL_HEADER, event2(0, 1, A, [[HASH_ALG.SHA384, Buffer.alloc(48)]])]), 'undeclared digest algorithm 0xc'],
    ['duplicate digest', Buffer.concat([MINIMAL_HEADER, event2(0, 1, A, [[HASH_ALG.SHA1, Buffer.alloc(20)], [HASH_ALG.SHA1, Buffer.alloc(20)]])]), 'two digests'],
    ['zero algorithms', header([]), 'announces 0 algorithms'],
    ['absurd algorithm count', header([[HASH_ALG.SHA256, 32]], 1000000), 'announces 1000000 algorithms'],
    ['wrong SHA-256 size', header([[HASH_ALG.SHA256, 20]]), 'SHA256 a digest size of 20'],
    ['duplicate algorithm', header([[HASH_ALG.SHA256, 32], [HASH_ALG.SHA256, 32]]), 'twice'],
  ];
  for (const [name, raw, msg] of bad) it(`rejects ${name}`, () => assert.throws(() => parseEventLog(raw), code('EVENT_LOG_INVALID', msg)));

  it('never throws anything but EVENT_LOG_INVALID on mutated logs', () => {
    fc.assert(
      fc.property(fc.nat(LOG.length - 1), fc.integer({ min: 0, max: 255 }), fc.nat(LOG.length), (pos, byte, cut) => {
        const b = Buffer.from(LOG);
        b[pos] = byte;
        for (const input of [b, b.subarray(0, cut)]) {
          try {
            const log = parseEventLog(input);
            for (const bank of [HASH_ALG.SHA1, HASH_ALG.SHA256, HASH_ALG.SHA384]) {
              try {
                verifyEventLogAgainstPcrs(log, want256, bank);
              } catch (err) {
                if (!(err instanceof AttestationError) || !['EVENT_LOG_INVALID', 'EVENT_LOG_MISMATCH'].includes(err.code)) throw err;
              }
            }
          } catch (err) {
            if (!(err instanceof AttestationError) || err.code !== 'EVENT_LOG_INVALID') throw err;
          }
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('replayEventLog', () => {
  it('replays SHA-256, skipping EV_NO_ACTION', () => assert.deepEqual(replayEventLog(parseEventLog(LOG), HASH_ALG.SHA256), want256));

  it('replays SHA-1', () => {
    assert.ok(replayEventLog(parseEventLog(LOG), HASH_ALG.SHA1).get(4)!.equals(extend('sha1', Buffer.alloc(20), B)));
  });

  it('no events, no PCRs', () => assert.equal(replayEventLog(parseEventLog(MINIMAL_HEADER), HASH_ALG.SHA256).size, 0));

  for (const l of [0, 3, 4]) {
    it(`StartupLocality ${l} sets PCR 0's initial value`, () => {
      const log = parseEventLog(Buffer.concat([MINIMAL_HEADER, locality(l), event2(0, 1, A)]));
      const init = Buffer.alloc(32);
      init[31] = l;
      assert.ok(replayEventLog(log, HASH_ALG.SHA256).get(0)!.equals(extend('sha256', init, A)));
    });
  }

  it('cannot replay a bank the log lacks or an unknown algorithm', () => {
    assert.throws(() => replayEventLog(parseEventLog(LOG), HASH_ALG.SHA384), code('EVENT_LOG_INVALID', 'no SHA384 digests'));
    assert.throws(() => replayEventLog(parseEventLog(LOG), 0x12), code('EVENT_LOG_INVALID', 'cannot replay hash algorithm 0x12'));
  });

  it('an event without the bank digest is invalid', () => {
    const log = parseEventLog(Buffer.concat([MINIMAL_HEADER, event2(3, 1, A, [[HASH_ALG.SHA1, sha('sha1', A)]])]));
    assert.throws(() => replayEventLog(log, HASH_ALG.SHA256), code('EVENT_LOG_INVALID', 'event 0 (PCR 3) has no SHA256 digest'));
  });
});

describe('verifyEventLogAgainstPcrs', () => {
  const quoted = (over: Record<number, Buffer | undefined> = {}) => {
    const m = new Map<number, Buffer>();
    for (let i = 0; i < 24; i++) m.set(i, want256.get(i) ?? Buffer.alloc(32, 0xee));
    for (const [k, v] of Object.entries(over)) {
      if (v === undefined) m.delete(Number(k));
      else m.set(Number(k), v);
    }
    return m;
  };

  it('accepts a log that explains the quote (PCRs without events unchecked)', () => {
    const r = verifyEventLogAgainstPcrs(LOG, quoted(), HASH_ALG.SHA256);
    assert.deepEqual(r.verifiedPcrs, [0, 4, 7]);
    assert.equal(r.skipped, false);
  });

  it('accepts the minimal header with any PCR values', () => assert.deepEqual(verifyEventLogAgainstPcrs(MINIMAL_HEADER, quoted(), HASH_ALG.SHA256).verifiedPcrs, []));

  it('skips an empty log', () => assert.equal(verifyEventLogAgainstPcrs(Buffer.alloc(0), quoted(), HASH_ALG.SHA256).skipped, true));

  it('accepts a parsed log', () => assert.deepEqual(verifyEventLogAgainstPcrs(parseEventLog(LOG), quoted(), HASH_ALG.SHA256).verifiedPcrs, [0, 4, 7]));

  const mismatches: Array<[string, Record<number, Buffer | undefined>, Array<[number, string | null]>]> = [
    ['one PCR differs', { 4: Buffer.alloc(32, 1) }, [[4, '01'.repeat(32)]]],
    ['two PCRs differ', { 0: Buffer.alloc(32, 2), 7: Buffer.alloc(32, 3) }, [[0, '02'.repeat(32)], [7, '03'.repeat(32)]]],
    ['a PCR with events is not quoted', { 7: undefined }, [[7, null]]],
  ];
  for (const [name, over, want] of mismatches) {
    it(`fails when ${name}`, () => {
      assert.throws(
        () => verifyEventLogAgainstPcrs(LOG, quoted(over), HASH_ALG.SHA256),
        (e: unknown) => {
          assert.ok(e instanceof AttestationError && e.code === 'EVENT_LOG_MISMATCH');
          const got = (e.details.mismatches as Array<{ pcr: number; expected: string; actual: string | null }>).map((m) => [m.pcr, m.actual]);
          assert.deepEqual(got, want);
          for (const [pcr] of want) {
            assert.ok(e.message.includes(`PCR[${pcr}] log ${want256.get(pcr)!.toString('hex').slice(0, 8)}…`), e.message);
            assert.equal((e.details.mismatches as Array<{ pcr: number; expected: string }>).find((m) => m.pcr === pcr)!.expected, want256.get(pcr)!.toString('hex'));
          }
          return true;
        },
      );
    });
  }

  it('names the bank and the quoted value', () => {
    assert.throws(() => verifyEventLogAgainstPcrs(LOG, quoted({ 4: Buffer.alloc(32, 0xab) }), HASH_ALG.SHA256), code('EVENT_LOG_MISMATCH', 'quoted SHA256 PCR values: PCR[4] log'));
    assert.throws(() => verifyEventLogAgainstPcrs(LOG, quoted({ 4: Buffer.alloc(32, 0xab) }), HASH_ALG.SHA256), code('EVENT_LOG_MISMATCH', 'quoted abababab…'));
  });

  it('allowUnquoted ignores PCRs missing from the quote', () => {
    assert.deepEqual(verifyEventLogAgainstPcrs(LOG, quoted({ 7: undefined }), HASH_ALG.SHA256, { allowUnquoted: true }).verifiedPcrs, [0, 4]);
  });

  it('a truncated log is EVENT_LOG_INVALID', () => assert.throws(() => verifyEventLogAgainstPcrs(LOG.subarray(0, LOG.length - 3), quoted(), HASH_ALG.SHA256), code('EVENT_LOG_INVALID', 'truncated')));

  it('verifies the SHA-1 bank too', () => {
    const q = new Map([
      [0, extend('sha1', Buffer.alloc(20), A, SEP)],
      [4, extend('sha1', Buffer.alloc(20), B)],
      [7, extend('sha1', Buffer.alloc(20), SEP)],
    ]);
    assert.deepEqual(verifyEventLogAgainstPcrs(LOG, q, HASH_ALG.SHA1).verifiedPcrs, [0, 4, 7]);
  });
});
