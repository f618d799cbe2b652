/**
 * The qemu-tdx attestation document: Go JSON `{"RawQuote": base64, "UserData": base64}`, and the
 * TD measurements a quote carries, as the measurement indices of the attestation config.
 */
import { AttestationError } from '../errors.js';
import { goBytes, goBytesValue, goField, parseGoJsonObject } from '../go-json.js';
import type { TdReportBody } from './quote.js';

/** A decoded qemu-tdx document. */
export interface TdxDocument {
  rawQuote: Buffer;
  userData: Buffer;
}

/** Encodes a qemu-tdx document (Go field order and base64). */
export function encodeTdxDocument(doc: TdxDocument): Buffer {
  return Buffer.from(JSON.stringify({ RawQuote: goBytesValue(doc.rawQuote), UserData: goBytesValue(doc.userData) }));
}

/** Decodes a qemu-tdx document (DOCUMENT_MALFORMED on bad JSON or base64; the quote is required). */
export function decodeTdxDocument(bytes: Uint8Array): TdxDocument {
  const obj = parseGoJsonObject(bytes, 'TDX attestation document');
  const rawQuote = goBytes(goField(obj, 'RawQuote'), 'RawQuote');
  if (rawQuote.length === 0) throw new AttestationError('QUOTE_MISSING', 'TDX attestation document has no RawQuote', { details: { field: 'RawQuote' } });
  return { rawQuote, userData: goBytes(goField(obj, 'UserData'), 'UserData') };
}

/** TD measurements as config indices: 0 = MRTD, 1..4 = RTMR0..RTMR3 (48 bytes each). */
export function tdMeasurements(body: TdReportBody): Map<number, Buffer> {
  return new Map([
    [0, body.mrTd],
    [1, body.rtmrs[0]],
    [2, body.rtmrs[1]],
    [3, body.rtmrs[2]],
    [4, body.rtmrs[3]],
  ]);
}
