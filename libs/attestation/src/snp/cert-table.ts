/**
 * The certificate table of an extended SNP report (configfs-tsm `auxblob`;
 * docs/protocol/sev-snp.md §8): 24-byte entries GUID / offset / length, ended by an all-zero
 * entry, certificates (DER) at the offsets. Bounds-checked; malformed tables are ISSUER_FAILED.
 */
import { AttestationError } from '../errors.js';

/** GUIDs of the certificates a host may attach. */
export const CERT_TABLE_GUID = {
  vcek: '63da758d-e664-4564-adc5-f4b93be8accd',
  vlek: 'a8074bc2-a25a-483e-aae6-39c045a0b8a1',
  ask: '4ab7b379-bbac-4fe4-a02f-05aef327c782',
  ark: 'c0b406a4-a803-4952-9743-3fb6014cd0ae',
} as const;

const ENTRY = 24;
const MAX_ENTRIES = 64;

const guidToBytes = (g: string) => Buffer.from(g.replaceAll('-', ''), 'hex');
const bytesToGuid = (b: Buffer) => {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

const bad = (why: string, details: Record<string, unknown> = {}) => new AttestationError('ISSUER_FAILED', `certificate table: ${why}`, { details: { step: 'parsing certificate table', ...details } });

/** Certificates by GUID (lower-case, dashed); an empty blob is an empty table. */
export function parseCertTable(blob: Uint8Array): Map<string, Buffer> {
  const b = Buffer.from(blob);
  const out = new Map<string, Buffer>();
  if (b.length === 0) return out;
  for (let i = 0; ; i++) {
    if (i >= MAX_ENTRIES) throw bad(`more than ${MAX_ENTRIES} entries`);
    const at = i * ENTRY;
    if (at + ENTRY > b.length) throw bad(`entry ${i} at offset ${at} runs past the ${b.length}-byte table (missing terminator)`, { entry: i });
    const guid = b.subarray(at, at + 16);
    const offset = b.readUInt32LE(at + 16);
    const length = b.readUInt32LE(at + 20);
    if (guid.every((x) => x === 0) && offset === 0 && length === 0) return out;
    if (offset + length > b.length || offset < ENTRY * (i + 1)) throw bad(`entry ${i} (${bytesToGuid(guid)}) points at [${offset}, ${offset + length}) outside the table data`, { entry: i });
    out.set(bytesToGuid(guid), Buffer.from(b.subarray(offset, offset + length)));
  }
}

/** Builds a table (tests, tools): entries, terminator, then the certificates. */
export function encodeCertTable(certs: ReadonlyArray<[guid: string, der: Uint8Array]>): Buffer {
  const header = Buffer.alloc((certs.length + 1) * ENTRY);
  let offset = header.length;
  certs.forEach(([guid, der], i) => {
    guidToBytes(guid).copy(header, i * ENTRY);
    header.writeUInt32LE(offset, i * ENTRY + 16);
    header.writeUInt32LE(der.length, i * ENTRY + 20);
    offset += der.length;
  });
  return Buffer.concat([header, ...certs.map(([, der]) => Buffer.from(der))]);
}
