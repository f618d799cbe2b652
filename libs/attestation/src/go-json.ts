/**
 * Helpers for JSON written by Go's encoding/json: []byte is standard base64 (nil -> null) and
 * object keys match case-insensitively on decode (an exact match wins).
 */
import { AttestationError } from './errors.js';

/** Looks up `name` in a decoded Go-JSON object: exact key first, then case-insensitive. */
export function goField(obj: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

/** Decodes a Go []byte field: null/absent -> empty, otherwise strict standard base64. */
export function goBytes(value: unknown, field: string): Buffer {
  if (value === null || value === undefined) return Buffer.alloc(0);
  if (typeof value !== 'string') {
    throw new AttestationError('DOCUMENT_MALFORMED', `field ${field}: expected a base64 string, got ${typeof value}`, { details: { field } });
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
    throw new AttestationError('DOCUMENT_MALFORMED', `field ${field}: invalid base64`, { details: { field } });
  }
  return Buffer.from(value, 'base64');
}

/** Encodes a Go []byte: empty-but-present bytes as "", absent as null. */
export function goBytesValue(bytes: Uint8Array | null | undefined): string | null {
  return bytes === null || bytes === undefined ? null : Buffer.from(bytes).toString('base64');
}

/** Parses JSON into an object, mapping any syntax/shape problem to DOCUMENT_MALFORMED. */
export function parseGoJsonObject(data: Uint8Array | string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch (err) {
    throw new AttestationError('DOCUMENT_MALFORMED', `unmarshaling ${what}: ${(err as Error).message}`, { cause: err });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new AttestationError('DOCUMENT_MALFORMED', `unmarshaling ${what}: expected a JSON object`);
  }
  return v as Record<string, unknown>;
}
