/**
 * The X.509 side of DCAP (docs/protocol/tdx-dcap.md): certificate chains to the Intel SGX Root
 * CA at an explicit time, certificate revocation lists, and the raw ECDSA P-256 signatures
 * (r||s, 64 bytes) that quotes and signed collateral carry.
 */
import { createPublicKey, verify, type KeyObject, type X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import { AttestationError } from '../errors.js';

/** Verifies a raw r||s ECDSA-P256/SHA-256 signature. */
export function verifyP256Raw(key: KeyObject, data: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false;
  }
}

/** A P-256 public key from its raw x||y form (the quote's attestation key). */
export function p256KeyFromRaw(raw: Buffer): KeyObject {
  if (raw.length !== 64) throw new AttestationError('QUOTE_INVALID', `attestation key is ${raw.length} bytes, not 64`, { details: { field: 'attestation key' } });
  try {
    return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: raw.subarray(0, 32).toString('base64url'), y: raw.subarray(32).toString('base64url') }, format: 'jwk' });
  } catch (cause) {
    throw new AttestationError('QUOTE_INVALID', 'attestation key is not a point on P-256', { details: { field: 'attestation key' }, cause });
  }
}

/**
 * Checks `chain` (leaf first) up to the trusted root: each certificate is signed by the next,
 * every certificate is valid at `at`, the chain ends in (or is issued by) `root`.
 */
export function verifyChain(chain: X509Certificate[], root: X509Certificate, at: Date, what: string): void {
  checkChainValidity(chain, root, at, what);
  checkChainSignatures(chain, root, what);
}

/** The time-independent half of {@link verifyChain}: issuers, CA flags, signatures, the root. */
export function checkChainSignatures(chain: X509Certificate[], root: X509Certificate, what: string): void {
  const full = withRoot(chain, root);
  for (let i = 0; i < full.length; i++) {
    const cert = full[i]!;
    const issuer = full[i + 1] ?? root;
    if (i > 0 && !cert.ca) chainError(full, what, 'not-ca', i, `certificate ${i} signs another certificate but is not a CA`);
    if (!cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) chainError(full, what, 'signature', i, `certificate ${i} is not signed by its issuer`);
  }
  if (!full[full.length - 1]!.raw.equals(root.raw)) chainError(full, what, 'untrusted-root', full.length - 1, 'the chain does not end in the trusted root');
}

/**
 * The time-dependent half of {@link verifyChain}: every certificate (and the root) is valid at `at`;
 * otherwise CERT_CHAIN_INVALID with reason `not-yet-valid` or `expired` and both dates.
 */
export function checkChainValidity(chain: X509Certificate[], root: X509Certificate, at: Date, what: string): void {
  const full = withRoot(chain, root);
  full.forEach((cert, i) => {
    const from = new Date(cert.validFrom);
    const to = new Date(cert.validTo);
    if (at >= from && at <= to) return;
    const notYet = at < from;
    const state = notYet ? 'not yet valid' : 'expired';
    chainError(full, what, notYet ? 'not-yet-valid' : 'expired', i, `certificate ${i} is ${state} at ${at.toISOString()} (valid ${from.toISOString()} to ${to.toISOString()})`, {
      notBefore: from.toISOString(),
      notAfter: to.toISOString(),
      verifiedAt: at.toISOString(),
    });
  });
}

function withRoot(chain: X509Certificate[], root: X509Certificate): X509Certificate[] {
  return chain[chain.length - 1]?.raw.equals(root.raw) ? chain : [...chain, root];
}

function chainError(full: X509Certificate[], what: string, reason: string, index: number, message: string, extra: Record<string, unknown> = {}): never {
  throw new AttestationError('CERT_CHAIN_INVALID', `${what}: ${message}`, { details: { chain: what, reason, index, subject: full[index] ? cn(full[index]) : undefined, ...extra } });
}

/** A parsed certificate revocation list. */
export interface Crl {
  thisUpdate: Date;
  nextUpdate: Date | undefined;
  /** Revoked serial numbers, upper-case hex without leading zeros. */
  revoked: Set<string>;
  tbs: Buffer;
  signature: Buffer;
}

/** Parses a DER CRL (COLLATERAL_MALFORMED on any structural problem). */
export function parseCrl(der: Uint8Array, what: string): Crl {
  const malformed = (why: string): never => {
    throw new AttestationError('COLLATERAL_MALFORMED', `${what}: ${why}`, { details: { collateral: what } });
  };
  let parsed: ReturnType<typeof asn1js.fromBER>;
  try {
    // asn1js throws (instead of reporting) on some malformed content, e.g. an invalid GeneralizedTime.
    parsed = asn1js.fromBER(der);
  } catch (err) {
    return malformed(`not DER: ${(err as Error).message}`);
  }
  if (parsed.offset !== der.byteLength || !(parsed.result instanceof asn1js.Sequence)) malformed('not a DER SEQUENCE');
  const [tbsNode, , sigNode] = (parsed.result as asn1js.Sequence).valueBlock.value;
  if (!(tbsNode instanceof asn1js.Sequence) || !(sigNode instanceof asn1js.BitString)) malformed('not a CertificateList');
  const fields = (tbsNode as asn1js.Sequence).valueBlock.value;
  let i = fields[0] instanceof asn1js.Integer ? 1 : 0;
  i += 2; // signature algorithm, issuer name
  const thisUpdate = timeOf(fields[i++]) ?? malformed('thisUpdate missing');
  const nextUpdate = timeOf(fields[i]);
  if (nextUpdate) i++;
  const revoked = new Set<string>();
  const list = fields[i];
  if (list instanceof asn1js.Sequence) {
    for (const entry of list.valueBlock.value) {
      const serial = entry instanceof asn1js.Sequence ? entry.valueBlock.value[0] : undefined;
      if (!(serial instanceof asn1js.Integer)) malformed('revoked entry without serial number');
      revoked.add(normaliseSerial(Buffer.from((serial as asn1js.Integer).valueBlock.valueHexView).toString('hex')));
    }
  }
  return {
    thisUpdate,
    nextUpdate,
    revoked,
    tbs: Buffer.from((tbsNode as asn1js.Sequence).valueBeforeDecodeView),
    signature: Buffer.from((sigNode as asn1js.BitString).valueBlock.valueHexView),
  };
}

/**
 * Checks a CRL was issued by `issuer` (its signature) and is current at `at`, then that no
 * certificate of `certs` is listed.
 */
export function checkRevocation(crl: Crl, issuer: X509Certificate, certs: X509Certificate[], at: Date, what: string): void {
  checkCrlSignature(crl, issuer, what);
  checkCrlListing(crl, certs, at, what);
}

/** The CRL was issued by `issuer` (COLLATERAL_SIGNATURE_INVALID). */
export function checkCrlSignature(crl: Crl, issuer: X509Certificate, what: string): void {
  let signed = false;
  try {
    signed = verify('sha256', crl.tbs, issuer.publicKey, crl.signature);
  } catch {
    signed = false;
  }
  if (!signed) throw new AttestationError('COLLATERAL_SIGNATURE_INVALID', `${what}: not signed by ${cn(issuer)}`, { details: { collateral: what } });
}

/** The CRL is current at `at` (COLLATERAL_EXPIRED) and lists none of `certs` (CERT_REVOKED). */
export function checkCrlListing(crl: Crl, certs: X509Certificate[], at: Date, what: string): void {
  if (at < crl.thisUpdate || (crl.nextUpdate && at > crl.nextUpdate)) {
    throw new AttestationError('COLLATERAL_EXPIRED', `${what}: not current at ${at.toISOString()} (${crl.thisUpdate.toISOString()} to ${crl.nextUpdate?.toISOString() ?? 'open'})`, {
      details: { collateral: what, thisUpdate: crl.thisUpdate.toISOString(), nextUpdate: crl.nextUpdate?.toISOString(), at: at.toISOString() },
    });
  }
  for (const cert of certs) {
    const serial = normaliseSerial(cert.serialNumber);
    if (crl.revoked.has(serial)) {
      throw new AttestationError('CERT_REVOKED', `${what}: ${cn(cert)} (serial ${serial}) is revoked`, { details: { collateral: what, serial, subject: cn(cert) } });
    }
  }
}

function timeOf(node: asn1js.AsnType | undefined): Date | undefined {
  return node instanceof asn1js.UTCTime || node instanceof asn1js.GeneralizedTime ? node.toDate() : undefined;
}

function normaliseSerial(hex: string): string {
  return hex.toUpperCase().replace(/^0+(?=.)/, '');
}

/** The common name of a certificate, for messages. */
export function cn(cert: X509Certificate): string {
  return cert.subject.split('\n').find((l) => l.startsWith('CN='))?.slice(3) ?? cert.subject;
}
