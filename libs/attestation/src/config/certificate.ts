/**
 * PEM certificate fields of the attestation config (`amdRootKey`, `amdSigningKey`,
 * `intelRootKey`, docs/protocol/attestation-config.md). The config holds the DER bytes; JSON holds one PEM block.
 */
import { X509Certificate } from 'node:crypto';

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/;

/**
 * Decodes the first PEM block of `pem` into DER. It must be a `CERTIFICATE` block holding a
 * parseable X.509 certificate. Returns the reason as a string instead of throwing so callers
 * can name the field.
 */
export function certificateFromPem(pem: string): Buffer | string {
  const m = BLOCK.exec(pem);
  if (!m) return 'no PEM block found';
  if (m[1] !== 'CERTIFICATE') return `PEM block type is ${JSON.stringify(m[1])}, want "CERTIFICATE"`;
  const body = m[2]!.replace(/[\r\n\t ]/g, '');
  if (body.length === 0 || body.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return 'PEM body is not valid base64';
  const der = Buffer.from(body, 'base64');
  try {
    new X509Certificate(der);
  } catch (err) {
    return `not an X.509 certificate: ${(err as Error).message}`;
  }
  return der;
}

/** PEM encoding as Go's `pem.EncodeToMemory` writes it: 64-character lines, trailing newline. */
export function certificateToPem(der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
