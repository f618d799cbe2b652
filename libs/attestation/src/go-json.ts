/**
 * Helpers for JSON written or read by Go's encoding/json (docs/protocol/go-json.md): []byte as
 * standard base64 (nil -> null), and the one home of Go's key-to-field rule: keys bind under Unicode
 * case folding and, when several keys bind to one field, the last in the document wins.
 */
import { AttestationError } from './errors.js';

/** Go's name folding (upper(lower(rune)) per rune, simple mappings only), so equal folds = EqualFold. */
export function goFoldName(name: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(name)) return name.toUpperCase();
  let out = '';
  for (const ch of name) {
    const lower = ch.toLowerCase();
    const l = [...lower].length === 1 ? lower : ch;
    const upper = l.toUpperCase();
    out += [...upper].length === 1 ? upper : l;
  }
  return out;
}

/**
 * The value Go's decoder would store in struct field `name`: the last of `entries` whose key folds
 * equal to `name` (see the module comment). `entries` are key-first tuples in document order, e.g.
 * `Object.entries(obj)` or a token-preserving parser's members.
 */
export function goJsonField<V>(entries: Iterable<readonly [string, V, ...unknown[]]>, name: string): V | undefined {
  const want = goFoldName(name);
  let found: V | undefined;
  for (const [k, v] of entries) if (goFoldName(k) === want) found = v;
  return found;
}

/** {@link goJsonField} over a plain decoded object (JSON.parse keeps only the last of exact duplicates, as Go does). */
export function goField(obj: Record<string, unknown>, name: string): unknown {
  return goJsonField(Object.entries(obj), name);
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
