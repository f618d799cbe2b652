/**
 * A JSON tree that keeps every token's source text (64-bit numbers, string escapes, duplicate
 * keys) and the Go-style accessors the attestation documents are decoded with
 * (docs/protocol/vtpm-attestation.md, docs/protocol/go-json.md).
 */
import { AttestationError } from '../errors.js';
import { goBytes, goJsonField } from '../go-json.js';

/** A parsed JSON value that keeps its source tokens (64-bit numbers survive). */
export type JsonNode =
  | { kind: 'object'; entries: Array<[key: string, value: JsonNode, rawKey: string]> }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'string'; value: string; raw: string }
  | { kind: 'number' | 'bool' | 'null'; raw: string };

const MAX_DEPTH = 64;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// eslint-disable-next-line no-control-regex -- JSON forbids unescaped control characters in strings.
const CONTROL_CHARACTER = /[\u0000-\u001f]/;

/** Strict RFC 8259 parser keeping member order, duplicates and each token's source text. */
export class JsonParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parse(): JsonNode {
    const v = this.value(0);
    this.ws();
    if (this.pos !== this.text.length) this.fail('unexpected data after the top-level value');
    return v;
  }

  private fail(why: string): never {
    throw new AttestationError('DOCUMENT_MALFORMED', `${why} at offset ${this.pos}`, { details: { offset: this.pos } });
  }

  private ws(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos]!)) this.pos++;
  }

  private value(depth: number): JsonNode {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    this.ws();
    const c = this.text[this.pos];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    for (const [lit, kind] of [
      ['true', 'bool'],
      ['false', 'bool'],
      ['null', 'null'],
    ] as const) {
      if (this.text.startsWith(lit, this.pos)) {
        this.pos += lit.length;
        return { kind, raw: lit };
      }
    }
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) this.fail(c === undefined ? 'unexpected end of JSON input' : `invalid character ${JSON.stringify(c)}`);
    this.pos += m[0].length;
    return { kind: 'number', raw: m[0] };
  }

  private object(depth: number): JsonNode {
    const entries: Array<[string, JsonNode, string]> = [];
    this.pos++;
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return { kind: 'object', entries };
    }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') this.fail('expected a string key');
      const key = this.string();
      this.ws();
      if (this.text[this.pos] !== ':') this.fail('expected ":"');
      this.pos++;
      entries.push([key.value, this.value(depth + 1), key.raw]);
      this.ws();
      const c = this.text[this.pos++];
      if (c === '}') return { kind: 'object', entries };
      if (c !== ',') this.fail('expected "," or "}"');
    }
  }

  private array(depth: number): JsonNode {
    const items: JsonNode[] = [];
    this.pos++;
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return { kind: 'array', items };
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.ws();
      const c = this.text[this.pos++];
      if (c === ']') return { kind: 'array', items };
      if (c !== ',') this.fail('expected "," or "]"');
    }
  }

  // Documents are mostly long base64 strings: the closing quote is found with indexOf and the
  // contents checked with one regular expression (a character loop cost ~0.1 ms per document).
  // Strings that are malformed (no closing quote, a control character) take the character loop,
  // so every error and its offset stay as they were.
  private string(): { kind: 'string'; value: string; raw: string } {
    const start = this.pos;
    const end = this.closingQuote(start + 1);
    if (end === -1 || CONTROL_CHARACTER.test(this.text.slice(start + 1, end))) return this.stringByCharacter();
    this.pos = end + 1;
    const raw = this.text.slice(start, this.pos);
    if (!raw.includes('\\')) return { kind: 'string', value: raw.slice(1, -1), raw };
    try {
      return { kind: 'string', value: JSON.parse(raw) as string, raw };
    } catch {
      return this.fail('invalid escape in string');
    }
  }

  /**
   * Index of the quote that ends a string whose contents start at `from` (-1: none): the first
   * quote preceded by an even run of backslashes. Each backslash run is walked once (linear time).
   */
  private closingQuote(from: number): number {
    for (let quote = this.text.indexOf('"', from); quote !== -1; quote = this.text.indexOf('"', quote + 1)) {
      let slashes = 0;
      while (quote - slashes - 1 >= from && this.text.charCodeAt(quote - slashes - 1) === 0x5c) slashes++;
      if (slashes % 2 === 0) return quote;
    }
    return -1;
  }

  private stringByCharacter(): { kind: 'string'; value: string; raw: string } {
    const start = this.pos++;
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (Number.isNaN(c)) this.fail('unterminated string');
      if (c < 0x20) this.fail('control character in string');
      this.pos += c === 0x5c ? 2 : 1;
      if (c === 0x22) break;
    }
    const raw = this.text.slice(start, this.pos);
    try {
      return { kind: 'string', value: JSON.parse(raw) as string, raw };
    } catch {
      return this.fail('invalid escape in string');
    }
  }
}

/** Compact re-serialization keeping the original tokens (number spelling, string escapes). */
export function rawJson(n: JsonNode): string {
  switch (n.kind) {
    case 'object':
      return `{${n.entries.map(([, v, rawKey]) => `${rawKey}:${rawJson(v)}`).join(',')}}`;
    case 'array':
      return `[${n.items.map(rawJson).join(',')}]`;
    default:
      return n.raw;
  }
}

/** DOCUMENT_MALFORMED naming the field path. */
export const malformed = (path: string, why: string) => new AttestationError('DOCUMENT_MALFORMED', `field ${path}: ${why}`, { details: { field: path } });

/** Member lookup as Go's decoder binds struct fields (go-json.ts: case-folded, last match wins). */
export function member(obj: JsonNode & { kind: 'object' }, name: string): JsonNode | undefined {
  return goJsonField(obj.entries, name);
}

/** Absent or JSON null (Go's nil). */
export const isNil = (n: JsonNode | undefined): n is undefined | { kind: 'null'; raw: string } => n === undefined || n.kind === 'null';

/** The node as an object, or DOCUMENT_MALFORMED naming `path`. */
export function object(n: JsonNode, path: string): JsonNode & { kind: 'object' } {
  if (n.kind !== 'object') throw malformed(path, `expected an object, got ${n.kind}`);
  return n;
}

/** A Go []byte field (base64 string; null/absent = empty), or DOCUMENT_MALFORMED naming `path`. */
export function bytes(n: JsonNode | undefined, path: string): Buffer {
  if (isNil(n)) return Buffer.alloc(0);
  if (n.kind !== 'string') throw malformed(path, `expected a base64 string, got ${n.kind}`);
  return goBytes(n.value, path);
}
