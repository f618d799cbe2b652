/**
 * The vTPM attestation document (docs/protocol/vtpm-attestation.md): Go encoding/json of
 * `{Attestation: attest.Attestation, InstanceInfo: []byte, UserData: []byte}` where the
 * go-tpm-tools protobuf struct is written by encoding/json, not protojson (snake_case keys,
 * base64 bytes, decimal-string PCR map keys, omitempty, a `TeeAttestation` oneof wrapper).
 *
 * Decoding accepts what Go accepts (case-insensitive keys, last duplicate wins, null for nil);
 * encoding reproduces Go's bytes. The GCE `instance_info` and `TeeAttestation` objects are never
 * interpreted, so they are kept as raw JSON (compacted, original tokens) - a generic parser would
 * round 64-bit numbers in them.
 */
import { AttestationError } from '../errors.js';
import { bytes, isNil, JsonParser, malformed, member, object, rawJson, type JsonNode } from './json-tree.js';

/** TPM_ALG_ID values of the PCR banks (`pcrs.hash`). */
export const HASH_ALG = { SHA1: 0x0004, SHA256: 0x000b, SHA384: 0x000c, SHA512: 0x000d } as const;

/** PCR values of one bank, as quoted. */
export interface PcrBank {
  /** TPM_ALG_ID of the bank (see HASH_ALG); 0 when absent. */
  hash: number;
  pcrs: Map<number, Buffer>;
}

/** One TPM2_Quote: the TPMS_ATTEST bytes, the TPMT_SIGNATURE bytes and the quoted PCR values. */
export interface TpmQuote {
  quote: Buffer;
  rawSig: Buffer;
  pcrs: PcrBank | null;
}

/** go-tpm-tools `attest.Attestation`. Empty buffers/lists stand for absent (omitempty) fields. */
export interface TpmAttestation {
  /** TPMT_PUBLIC of the attestation key. */
  akPub: Buffer;
  /** One quote per PCR bank; a `null` entry is a nil quote. */
  quotes: Array<TpmQuote | null>;
  /** Raw TCG event log. */
  eventLog: Buffer;
  /** GCE instance info object as compact raw JSON, or `null`. */
  instanceInfo: string | null;
  canonicalEventLog: Buffer;
  /** DER of the AK certificate, if any. */
  akCert: Buffer;
  intermediateCerts: Buffer[];
  /** `{"SevSnpAttestation":...}`/`{"TdxAttestation":...}` as compact raw JSON, or `null`. */
  teeAttestation: string | null;
}

/** The document the vTPM issuers produce and validators consume. */
export interface VtpmAttestationDocument {
  attestation: TpmAttestation | null;
  /** Variant-specific instance info; `null` is Go's nil (distinct from empty). */
  instanceInfo: Buffer | null;
  userData: Buffer;
}

function list<T>(n: JsonNode | undefined, path: string, item: (n: JsonNode, path: string) => T): T[] {
  if (isNil(n)) return [];
  if (n.kind !== 'array') throw malformed(path, `expected an array, got ${n.kind}`);
  return n.items.map((x, i) => item(x, `${path}[${i}]`));
}

function rawObject(n: JsonNode | undefined, path: string): string | null {
  return isNil(n) ? null : rawJson(object(n, path));
}

function pcrBank(n: JsonNode, path: string): PcrBank {
  const obj = object(n, path);
  const hash = member(obj, 'hash');
  let alg = 0;
  if (!isNil(hash)) {
    if (hash.kind !== 'number' || !/^-?[0-9]+$/.test(hash.raw) || Math.abs(Number(hash.raw)) > 0x7fffffff) throw malformed(`${path}.hash`, 'expected an int32');
    alg = Number(hash.raw);
  }
  const pcrs = new Map<number, Buffer>();
  const values = member(obj, 'pcrs');
  if (!isNil(values)) {
    for (const [key, v] of object(values, `${path}.pcrs`).entries) {
      const index = /^[0-9]+$/.test(key) ? Number(key) : NaN;
      if (!(index <= 0xffffffff)) throw malformed(`${path}.pcrs`, `invalid PCR index ${JSON.stringify(key)}`);
      pcrs.set(index, bytes(v, `${path}.pcrs.${key}`));
    }
  }
  return { hash: alg, pcrs };
}

function quote(n: JsonNode, path: string): TpmQuote | null {
  if (n.kind === 'null') return null;
  const obj = object(n, path);
  const pcrs = member(obj, 'pcrs');
  return { quote: bytes(member(obj, 'quote'), `${path}.quote`), rawSig: bytes(member(obj, 'raw_sig'), `${path}.raw_sig`), pcrs: isNil(pcrs) ? null : pcrBank(pcrs, `${path}.pcrs`) };
}

function attestation(n: JsonNode, path: string): TpmAttestation {
  const obj = object(n, path);
  const f = (name: string) => member(obj, name);
  return {
    akPub: bytes(f('ak_pub'), `${path}.ak_pub`),
    quotes: list(f('quotes'), `${path}.quotes`, quote),
    eventLog: bytes(f('event_log'), `${path}.event_log`),
    instanceInfo: rawObject(f('instance_info'), `${path}.instance_info`),
    canonicalEventLog: bytes(f('canonical_event_log'), `${path}.canonical_event_log`),
    akCert: bytes(f('ak_cert'), `${path}.ak_cert`),
    intermediateCerts: list(f('intermediate_certs'), `${path}.intermediate_certs`, (x, p) => bytes(x, p)),
    teeAttestation: rawObject(f('TeeAttestation'), `${path}.TeeAttestation`),
  };
}

/**
 * Decodes a vTPM attestation document. Any syntax or shape problem is an AttestationError
 * `DOCUMENT_MALFORMED` with message `unmarshaling TPM attestation document: <reason>`.
 */
export function decodeDocument(data: Uint8Array | string): VtpmAttestationDocument {
  try {
    const root = object(new JsonParser(typeof data === 'string' ? data : Buffer.from(data).toString('utf8')).parse(), '(document)');
    const att = member(root, 'Attestation');
    const info = member(root, 'InstanceInfo');
    return {
      attestation: isNil(att) ? null : attestation(att, 'Attestation'),
      instanceInfo: isNil(info) ? null : bytes(info, 'InstanceInfo'),
      userData: bytes(member(root, 'UserData'), 'UserData'),
    };
  } catch (err) {
    const e = err instanceof AttestationError ? err : undefined;
    throw new AttestationError('DOCUMENT_MALFORMED', `unmarshaling TPM attestation document: ${e?.message ?? String(err)}`, { details: { ...e?.details }, cause: err });
  }
}

const b64 = (b: Uint8Array) => `"${Buffer.from(b).toString('base64')}"`;

/** Writes `"key":value` members, skipping empty ones (omitempty). */
function members(fields: Array<[string, string | undefined]>): string {
  return `{${fields
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([k, v]) => `"${k}":${v}`)
    .join(',')}}`;
}

const opt = (b: Uint8Array) => (b.length === 0 ? undefined : b64(b));

function encodeQuote(q: TpmQuote | null): string {
  if (q === null) return 'null';
  let pcrs: string | undefined;
  if (q.pcrs) {
    const keys = [...q.pcrs.pcrs.keys()].map(String).sort();
    const map = keys.length === 0 ? undefined : `{${keys.map((k) => `"${k}":${b64(q.pcrs!.pcrs.get(Number(k))!)}`).join(',')}}`;
    pcrs = members([
      ['hash', q.pcrs.hash === 0 ? undefined : String(q.pcrs.hash)],
      ['pcrs', map],
    ]);
  }
  return members([
    ['quote', opt(q.quote)],
    ['raw_sig', opt(q.rawSig)],
    ['pcrs', pcrs],
  ]);
}

function encodeAttestation(a: TpmAttestation): string {
  return members([
    ['ak_pub', opt(a.akPub)],
    ['quotes', a.quotes.length === 0 ? undefined : `[${a.quotes.map(encodeQuote).join(',')}]`],
    ['event_log', opt(a.eventLog)],
    ['instance_info', a.instanceInfo ?? undefined],
    ['canonical_event_log', opt(a.canonicalEventLog)],
    ['ak_cert', opt(a.akCert)],
    ['intermediate_certs', a.intermediateCerts.length === 0 ? undefined : `[${a.intermediateCerts.map(b64).join(',')}]`],
    ['TeeAttestation', a.teeAttestation ?? 'null'],
  ]);
}

/**
 * Encodes exactly as Go does: struct field order, omitempty for every attest.Attestation field
 * except `TeeAttestation` (written as `null` when absent), PCR map keys sorted as strings.
 */
export function encodeDocument(doc: VtpmAttestationDocument): Buffer {
  const att = doc.attestation === null ? 'null' : encodeAttestation(doc.attestation);
  const info = doc.instanceInfo === null ? 'null' : b64(doc.instanceInfo);
  return Buffer.from(`{"Attestation":${att},"InstanceInfo":${info},"UserData":${b64(doc.userData)}}`);
}

/**
 * Index of the first quote over the SHA-256 bank (validator step 7 of docs/protocol/vtpm-attestation.md). Like the
 * reference it stops at the first nil quote or quote without PCR data (QUOTE_MISSING).
 */
export function findSha256QuoteIndex(att: TpmAttestation | null): number {
  const missing = (msg: string, extra: Record<string, unknown> = {}) => new AttestationError('QUOTE_MISSING', msg, { details: extra });
  if (!att || att.quotes.length === 0) throw missing('attestation is missing quotes');
  for (const [i, q] of att.quotes.entries()) {
    if (q === null) throw missing('quote is nil', { index: i });
    if (q.pcrs === null) throw missing('no PCR data in attestation', { index: i });
    if (q.pcrs.hash === HASH_ALG.SHA256) return i;
  }
  throw missing('attestation did not include SHA256 hashed PCRs');
}
