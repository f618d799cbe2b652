/**
 * A minimal DER writer for certificates built straight from bytes (no ASN.1 object model): the
 * aTLS certificate of every handshake (libs/atls) and the kubelet certificate of every join ticket
 * (libs/k8s) are emitted with these helpers, because a generic ASN.1 serializer dominated the cost
 * of both (see tools/bench).
 */

/** DER tag-length-value; `parts` are concatenated as the content. */
export function derTlv(tag: number, ...parts: Buffer[]): Buffer {
  const content = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  const n = content.length;
  const len = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...len]), content]);
}

/** DER content (without tag and length) of a dotted OBJECT IDENTIFIER. */
export function encodeOid(oid: string): Buffer {
  const arcs = oid.split('.').map((a) => {
    if (!/^\d+$/.test(a)) throw new Error(`invalid OID ${oid}`);
    return Number(a);
  });
  if (arcs.length < 2 || arcs[0]! > 2) throw new Error(`invalid OID ${oid}`);
  const out: number[] = [];
  for (const v of [arcs[0]! * 40 + arcs[1]!, ...arcs.slice(2)]) {
    const bytes = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) bytes.unshift((x & 0x7f) | 0x80);
    out.push(...bytes);
  }
  return Buffer.from(out);
}

/** A full OBJECT IDENTIFIER element. */
export function derOid(oid: string): Buffer {
  return derTlv(0x06, encodeOid(oid));
}

/** X.509 Time: UTCTime for 1950-2049, GeneralizedTime otherwise (RFC 5280 §4.1.2.5), whole seconds. */
export function derTime(ms: number): Buffer {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = Number(iso.slice(0, 4));
  return year >= 1950 && year < 2050 ? derTlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : derTlv(0x18, Buffer.from(`${digits}Z`));
}

/** DER INTEGER content of a positive serial: no redundant leading zeros, 0x00 prefix if the top bit is set. */
export function positiveSerial(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes);
  let i = 0;
  while (i < b.length - 1 && b[i] === 0 && b[i + 1]! < 0x80) i++;
  const trimmed = b.subarray(i);
  return trimmed[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : Buffer.from(trimmed);
}

/** PEM armour for a DER certificate (64-character lines, trailing newline). */
export function certificatePem(der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
