/**
 * Secret redaction for log records. Three independent nets, because one forgotten field must
 * not leak a key:
 *  1. values of fields whose name says "secret" (secret, password, token, salt, seed, private key,
 *     data/disk key, passphrase) are replaced;
 *  2. raw bytes (Buffer/Uint8Array) are never printed, only their length;
 *  3. every registered secret value is scrubbed from all strings in its hex, base64, base64url and
 *     raw-text encodings, wherever it appears (messages, error texts, nested fields).
 */

export const REDACTED = '[REDACTED]';

const SECRET_FIELD = /(secret|password|passphrase|token|salt|seed|private_?key|privkey|data_?key$|disk_?key|^key$|kubeconfig|init_?secret)/i;

/** Marks a value as secret: it prints as [REDACTED] in logs, inspection and JSON. */
export class Secret<T = Uint8Array> {
  readonly #value: T;
  constructor(value: T) {
    this.#value = value;
  }
  /** The wrapped value; only for the code that really uses it. */
  reveal(): T {
    return this.#value;
  }
  toString(): string {
    return REDACTED;
  }
  toJSON(): string {
    return REDACTED;
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Secret(${REDACTED})`;
  }
}

/** Holds secret values whose encodings must never appear in log output. */
export class SecretRegistry {
  #needles: string[] = [];

  /** Registers a secret; short values (< 8 bytes) are refused because they would scrub ordinary text. */
  register(value: Uint8Array | string): void {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
    if (bytes.length < 8) return;
    const forms = new Set<string>([
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      bytes.toString('base64'),
      bytes.toString('base64').replace(/=+$/, ''),
      bytes.toString('base64url'),
      bytes.toString('base64').replaceAll('+', '-').replaceAll('/', '_'),
    ]);
    const text = bytes.toString('utf8');
    if (/^[\x20-\x7e]+$/.test(text)) forms.add(text);
    for (const f of forms) if (f.length >= 8 && !this.#needles.includes(f)) this.#needles.push(f);
    // Longest first so a longer encoding is not partially replaced by a shorter one.
    this.#needles.sort((a, b) => b.length - a.length);
  }

  /** Replaces every registered encoding inside `text`. */
  scrub(text: string): string {
    let out = text;
    for (const n of this.#needles) if (out.includes(n)) out = out.split(n).join(REDACTED);
    return out;
  }

  get size(): number {
    return this.#needles.length;
  }
}

/** Returns a redacted deep copy of a log value (cycles and depth are bounded). */
export function redactValue(value: unknown, registry?: SecretRegistry, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') return registry ? registry.scrub(value) : value;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return String(value);
  if (value instanceof Secret) return REDACTED;
  if (value instanceof Uint8Array) return `[bytes:${value.length}]`;
  if (depth > 8) return '[depth]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (value instanceof Error) {
    const asJson = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as unknown as { toJSON(): unknown }).toJSON() : undefined;
    const base = asJson && typeof asJson === 'object' ? asJson : { name: value.name, message: value.message };
    return redactValue(base, registry, depth + 1, seen);
  }
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => redactValue(v, registry, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_FIELD.test(k) && v !== undefined && v !== null && v !== '' ? REDACTED : redactValue(v, registry, depth + 1, seen);
  }
  return out;
}

/** Whether a field name is treated as secret by the name rule (exported for tests and docs). */
export function isSecretFieldName(name: string): boolean {
  return SECRET_FIELD.test(name);
}
