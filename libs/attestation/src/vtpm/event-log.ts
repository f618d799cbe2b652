/**
 * TCG PC Client event log (docs/protocol/vtpm-attestation.md, event log): parsing, replay per PCR
 * bank, and the check that the log explains the quoted PCR values.
 *
 * Layout (little-endian): the first record is in the SHA-1 format (u32 pcr, u32 type, 20-byte
 * digest, u32 size, data); in a crypto-agile log it is an EV_NO_ACTION `Spec ID Event03` header
 * listing the digest algorithms, and every later record is a TCG_PCR_EVENT2 (u32 pcr, u32 type,
 * u32 count, count x (u16 alg, digest), u32 size, data). Logs without that header are legacy
 * SHA-1 logs (all records in the first format).
 */
import { createHash } from 'node:crypto';
import { AttestationError } from '../errors.js';
import { HASH_ALG } from './document.js';

/** Events that are recorded but never extended into a PCR. */
export const EV_NO_ACTION = 0x00000003;
/** Separates pre-OS from OS measurements. */
export const EV_SEPARATOR = 0x00000004;

const SPEC_ID_SIGNATURE = Buffer.from('Spec ID Event03\0', 'latin1');
const STARTUP_LOCALITY = Buffer.from('StartupLocality\0', 'latin1');

/** Digest sizes and Node hash names of the banks we can replay. */
const BANKS: Record<number, { size: number; hash: string; name: string }> = {
  [HASH_ALG.SHA1]: { size: 20, hash: 'sha1', name: 'SHA1' },
  [HASH_ALG.SHA256]: { size: 32, hash: 'sha256', name: 'SHA256' },
  [HASH_ALG.SHA384]: { size: 48, hash: 'sha384', name: 'SHA384' },
  [HASH_ALG.SHA512]: { size: 64, hash: 'sha512', name: 'SHA512' },
};

/** One digest algorithm of the log as announced by the Spec ID header. */
export interface EventLogAlgorithm {
  readonly algId: number;
  readonly digestSize: number;
}

/** The crypto-agile header (`TCG_EfiSpecIDEventStruct`). */
export interface SpecIdEvent {
  readonly platformClass: number;
  readonly specVersionMinor: number;
  readonly specVersionMajor: number;
  readonly errata: number;
  readonly uintnSize: number;
  readonly algorithms: readonly EventLogAlgorithm[];
  readonly vendorInfo: Buffer;
}

/** One measured (or informational) event. */
export interface TcgEvent {
  /** Position in the log, 0 = first record after the header. */
  readonly sequence: number;
  readonly pcr: number;
  readonly type: number;
  /** Digest per TPM_ALG_ID. */
  readonly digests: ReadonlyMap<number, Buffer>;
  readonly data: Buffer;
}

/** A parsed event log. `specId` is null for a legacy SHA-1 log. */
export interface EventLog {
  readonly specId: SpecIdEvent | null;
  readonly algorithms: readonly EventLogAlgorithm[];
  readonly events: readonly TcgEvent[];
}

function invalid(message: string, details: Record<string, unknown> = {}): AttestationError {
  return new AttestationError('EVENT_LOG_INVALID', `invalid event log: ${message}`, { details });
}

/** Bounds-checked little-endian reader; running past the end is EVENT_LOG_INVALID. */
class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get remaining(): number {
    return this.buf.length - this.pos;
  }
  bytes(n: number, what: string): Buffer {
    if (n > this.remaining) throw invalid(`truncated ${what}: need ${n} bytes at offset ${this.pos}, have ${this.remaining}`, { offset: this.pos });
    const out = Buffer.from(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return out;
  }
  u8(what: string): number {
    return this.bytes(1, what)[0]!;
  }
  u16(what: string): number {
    return this.bytes(2, what).readUInt16LE(0);
  }
  u32(what: string): number {
    return this.bytes(4, what).readUInt32LE(0);
  }
}

function parseSpecId(data: Buffer): SpecIdEvent {
  const r = new Reader(data);
  r.bytes(16, 'Spec ID signature');
  const platformClass = r.u32('Spec ID platform class');
  const specVersionMinor = r.u8('Spec ID version');
  const specVersionMajor = r.u8('Spec ID version');
  const errata = r.u8('Spec ID errata');
  const uintnSize = r.u8('Spec ID uintn size');
  const count = r.u32('Spec ID algorithm count');
  if (count === 0 || count * 4 > r.remaining) throw invalid(`Spec ID header announces ${count} algorithms`);
  const algorithms: EventLogAlgorithm[] = [];
  for (let i = 0; i < count; i++) {
    const algId = r.u16('Spec ID algorithm');
    const digestSize = r.u16('Spec ID digest size');
    const known = BANKS[algId];
    if (known && known.size !== digestSize) throw invalid(`Spec ID header gives ${known.name} a digest size of ${digestSize}`, { algId });
    if (algorithms.some((a) => a.algId === algId)) throw invalid(`Spec ID header lists algorithm 0x${algId.toString(16)} twice`, { algId });
    algorithms.push({ algId, digestSize });
  }
  const vendorInfo = r.bytes(r.u8('Spec ID vendor info size'), 'Spec ID vendor info');
  return { platformClass, specVersionMinor, specVersionMajor, errata, uintnSize, algorithms, vendorInfo };
}

/** Parses a raw event log (crypto-agile or legacy SHA-1). Malformed input is EVENT_LOG_INVALID. */
export function parseEventLog(raw: Uint8Array): EventLog {
  const r = new Reader(Buffer.from(raw));
  if (r.remaining === 0) throw invalid('empty');
  const sha1Event = (sequence: number): TcgEvent => {
    const pcr = r.u32('event PCR index');
    const type = r.u32('event type');
    const digest = r.bytes(20, 'SHA-1 digest');
    const data = r.bytes(r.u32('event size'), 'event data');
    return { sequence, pcr, type, digests: new Map([[HASH_ALG.SHA1, digest]]), data };
  };
  const first = sha1Event(0);
  const isSpecId = first.type === EV_NO_ACTION && first.pcr === 0 && first.data.subarray(0, 16).equals(SPEC_ID_SIGNATURE);
  if (!isSpecId) {
    const events = [first];
    while (r.remaining > 0) events.push(sha1Event(events.length));
    return { specId: null, algorithms: [{ algId: HASH_ALG.SHA1, digestSize: 20 }], events };
  }
  const specId = parseSpecId(first.data);
  const sizes = new Map(specId.algorithms.map((a) => [a.algId, a.digestSize]));
  const events: TcgEvent[] = [];
  while (r.remaining > 0) {
    const sequence = events.length;
    const pcr = r.u32('event PCR index');
    const type = r.u32('event type');
    const count = r.u32('event digest count');
    if (count > sizes.size) throw invalid(`event ${sequence} has ${count} digests but the log declares ${sizes.size} algorithms`, { sequence });
    const digests = new Map<number, Buffer>();
    for (let i = 0; i < count; i++) {
      const algId = r.u16('event digest algorithm');
      const size = sizes.get(algId);
      if (size === undefined) throw invalid(`event ${sequence} uses undeclared digest algorithm 0x${algId.toString(16)}`, { sequence, algId });
      if (digests.has(algId)) throw invalid(`event ${sequence} has two digests for algorithm 0x${algId.toString(16)}`, { sequence, algId });
      digests.set(algId, r.bytes(size, 'event digest'));
    }
    const data = r.bytes(r.u32('event size'), 'event data');
    events.push({ sequence, pcr, type, digests, data });
  }
  return { specId, algorithms: specId.algorithms, events };
}

/**
 * Replays the log into the PCRs of bank `bank` (a TPM_ALG_ID): for every event except
 * EV_NO_ACTION, `PCR := H(PCR || digest)`. PCRs start at zero, except PCR 0 after a
 * `StartupLocality` EV_NO_ACTION event, which starts with the locality in its last byte.
 * Returns only PCRs that received at least one extend.
 */
export function replayEventLog(log: EventLog, bank: number): Map<number, Buffer> {
  const alg = BANKS[bank];
  if (!alg) throw invalid(`cannot replay hash algorithm 0x${bank.toString(16)}`, { bank });
  if (!log.algorithms.some((a) => a.algId === bank)) throw invalid(`the log has no ${alg.name} digests`, { bank });
  let locality = 0;
  const pcrs = new Map<number, Buffer>();
  for (const e of log.events) {
    if (e.type === EV_NO_ACTION) {
      if (e.pcr === 0 && e.data.length === STARTUP_LOCALITY.length + 1 && e.data.subarray(0, 16).equals(STARTUP_LOCALITY) && !pcrs.has(0)) locality = e.data[16]!;
      continue;
    }
    const digest = e.digests.get(bank);
    if (!digest) throw invalid(`event ${e.sequence} (PCR ${e.pcr}) has no ${alg.name} digest`, { sequence: e.sequence, pcr: e.pcr });
    let current = pcrs.get(e.pcr);
    if (!current) {
      current = Buffer.alloc(alg.size);
      if (e.pcr === 0) current[alg.size - 1] = locality;
    }
    pcrs.set(e.pcr, createHash(alg.hash).update(current).update(digest).digest());
  }
  return pcrs;
}

/** Options for `verifyEventLogAgainstPcrs`. */
export interface EventLogVerifyOptions {
  /**
   * Ignore PCRs that have events but are absent from the quoted values (go-attestation's
   * behaviour). Default false: such PCRs fail, since quotes cover all 24 PCRs anyway.
   */
  readonly allowUnquoted?: boolean;
}

/** What was checked. */
export interface EventLogVerification {
  /** PCR indices whose quoted value the log reproduces, ascending. */
  readonly verifiedPcrs: number[];
  /** True when the log was empty and nothing was checked. */
  readonly skipped: boolean;
  readonly log: EventLog | null;
}

const short = (b: Buffer | undefined) => (b === undefined ? 'not quoted' : `${b.toString('hex').slice(0, 8)}…`);

/**
 * Checks that replaying `log` in `bank` yields the quoted value of every PCR that has at least
 * one measured event (PCRs without events are not checked). An empty raw log checks nothing.
 * Mismatches are one EVENT_LOG_MISMATCH naming each PCR, with full values in details.
 */
export function verifyEventLogAgainstPcrs(
  log: EventLog | Uint8Array,
  pcrs: ReadonlyMap<number, Uint8Array>,
  bank: number,
  options: EventLogVerifyOptions = {},
): EventLogVerification {
  if (log instanceof Uint8Array && log.length === 0) return { verifiedPcrs: [], skipped: true, log: null };
  const parsed = log instanceof Uint8Array ? parseEventLog(log) : log;
  const replayed = replayEventLog(parsed, bank);
  const verifiedPcrs: number[] = [];
  const mismatches: Array<{ pcr: number; expected: Buffer; quoted: Buffer | undefined }> = [];
  for (const pcr of [...replayed.keys()].sort((a, b) => a - b)) {
    const expected = replayed.get(pcr)!;
    const quoted = pcrs.get(pcr);
    if (quoted === undefined && options.allowUnquoted) continue;
    if (quoted !== undefined && expected.equals(quoted)) verifiedPcrs.push(pcr);
    else mismatches.push({ pcr, expected, quoted: quoted === undefined ? undefined : Buffer.from(quoted) });
  }
  if (mismatches.length > 0) {
    const parts = mismatches.map((m) => `PCR[${m.pcr}] log ${short(m.expected)} quoted ${short(m.quoted)}`);
    throw new AttestationError('EVENT_LOG_MISMATCH', `event log does not replay to the quoted ${BANKS[bank]!.name} PCR values: ${parts.join('; ')}`, {
      details: {
        bank,
        mismatches: mismatches.map((m) => ({ pcr: m.pcr, expected: m.expected.toString('hex'), actual: m.quoted?.toString('hex') ?? null })),
      },
    });
  }
  return { verifiedPcrs, skipped: false, log: parsed };
}
