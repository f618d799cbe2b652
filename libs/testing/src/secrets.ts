/**
 * Leak detection for "secrets never leave their place" tests: every encoding a secret could take
 * in a log line (hex either case, base64, base64url, raw bytes, a JSON byte array). Findings name
 * the secret and the encoding, never the value.
 */
export interface NamedSecret {
  name: string;
  value: Uint8Array | string;
}

/** The textual forms of a secret a log could carry. */
export function secretForms(value: Uint8Array | string): Array<{ encoding: string; text: string }> {
  if (typeof value === 'string') return [{ encoding: 'text', text: value }];
  const b = Buffer.from(value);
  return [
    { encoding: 'hex', text: b.toString('hex') },
    { encoding: 'HEX', text: b.toString('hex').toUpperCase() },
    { encoding: 'base64', text: b.toString('base64').replace(/=+$/, '') },
    { encoding: 'base64url', text: b.toString('base64url') },
    { encoding: 'raw', text: b.toString('latin1') },
    { encoding: 'json bytes', text: `[${[...b].join(',')}]` },
  ];
}

/** Which secrets (name + encoding) occur in `text`; empty when none. Values shorter than 8 bytes are refused. */
export function findSecretLeaks(text: string, secrets: readonly NamedSecret[]): string[] {
  const found: string[] = [];
  for (const s of secrets) {
    if (s.value.length < 8) throw new Error(`secret ${s.name} is too short (${s.value.length}) to search for without false hits`);
    for (const f of secretForms(s.value)) if (text.includes(f.text)) found.push(`${s.name} (${f.encoding})`);
  }
  return found;
}
