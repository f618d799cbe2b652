import { createHash, timingSafeEqual, verify as cryptoVerify } from 'node:crypto';
import { AttestationError, type Validator, type Variant } from '@asterism/attestation';
import { publicKeyFromSpki } from '@asterism/crypto';
import { parseCertificateFields, parseOidSequence, type CertificateFields } from './der.js';
import { AtlsError } from './errors.js';

/** The reference's per-`Validate` timeout (docs/protocol/constants.md). */
export const VALIDATION_TIMEOUT_MS = 30_000;

/** What `processCertificate` establishes about a peer's leaf certificate. */
export interface ParsedAtlsCertificate {
  readonly der: Buffer;
  /** sha256(SPKI DER): what the document's user data must equal. */
  readonly publicKeyHash: Buffer;
  /** Extensions in certificate order: dotted OID and raw extnValue contents. */
  readonly extensions: ReadonlyArray<{ oid: string; critical: boolean; value: Buffer }>;
}

/** The verdict on a peer: which validator accepted it (absent when nothing was checked). */
export interface AtlsPeerVerdict {
  readonly variant?: Variant;
  /** The attestation document the validator accepted (consumers derive a peer identity from it, e.g. its AK). */
  readonly document?: Buffer;
}

// Critical extensions Go's x509 understands; any other critical extension fails Verify.
const HANDLED_CRITICAL = new Set(['2.5.29.15', '2.5.29.19', '2.5.29.37', '2.5.29.17', '2.5.29.30', '2.5.29.32', '2.5.29.35', '2.5.29.14', '2.5.29.36', '2.5.29.54']);
const EXT_KEY_USAGE = '2.5.29.37';
const EKU_OK = new Set(['1.3.6.1.5.5.7.3.1', '2.5.29.37.0']);
const SIGNATURE_HASH: Record<string, string> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
};

/**
 * docs/protocol/atls.md `processCertificate`, stricter: the certificate parses, its self-signature holds,
 * now ∈ [NotBefore, NotAfter], no unhandled critical extension, EKU (if any) allows server auth.
 * Possession of the key is proven by the TLS handshake itself.
 */
export function parseAtlsCertificate(der: Uint8Array | undefined, now = new Date()): ParsedAtlsCertificate {
  if (!der || der.length === 0) throw new AtlsError('NO_CERTIFICATE', 'rawCerts is empty: the peer presented no certificate');
  const raw = Buffer.from(der);
  let cert: CertificateFields;
  try {
    cert = parseCertificateFields(raw);
  } catch (err) {
    throw new AtlsError('CERT_MALFORMED', `parsing peer certificate: ${(err as Error).message}`, { cause: err });
  }
  // Self-signature: the reference skips it (leaf == root); checking it is harmless and catches tampering.
  const hash = SIGNATURE_HASH[cert.signatureAlgorithm];
  let signatureOk = false;
  try {
    const key = publicKeyFromSpki(cert.spkiRaw);
    if (hash) signatureOk = cryptoVerify(hash, cert.tbsRaw, key, cert.signature);
    else if (cert.signatureAlgorithm === '1.3.101.112') signatureOk = cryptoVerify(null, cert.tbsRaw, key, cert.signature);
  } catch (err) {
    throw new AtlsError('CERT_SIGNATURE_INVALID', `checking certificate self-signature: ${(err as Error).message}`, { cause: err });
  }
  if (!signatureOk) {
    throw new AtlsError('CERT_SIGNATURE_INVALID', `certificate is not self-signed by its key (signature algorithm ${cert.signatureAlgorithm})`);
  }
  const t = now.getTime();
  const { notBefore, notAfter, extensions } = cert;
  if (t < notBefore.getTime()) {
    throw new AtlsError('CERT_NOT_YET_VALID', `certificate is not valid before ${notBefore.toISOString()} (now ${now.toISOString()})`);
  }
  if (t > notAfter.getTime()) {
    throw new AtlsError('CERT_EXPIRED', `certificate expired at ${notAfter.toISOString()} (now ${now.toISOString()})`);
  }
  for (const e of extensions) {
    if (e.critical && !HANDLED_CRITICAL.has(e.oid)) {
      throw new AtlsError('CERT_UNHANDLED_CRITICAL_EXTENSION', `certificate has an unhandled critical extension ${e.oid}`);
    }
    if (e.oid === EXT_KEY_USAGE) checkEku(e.value);
  }
  return { der: raw, publicKeyHash: createHash('sha256').update(cert.spkiRaw).digest(), extensions };
}

/**
 * docs/protocol/atls.md `verifyEmbeddedReport`: the first extension whose OID matches any validator is
 * validated (30 s timeout) over `nonce`, and the user data it binds must equal sha256(SPKI).
 */
export async function verifyEmbeddedDocument(
  cert: ParsedAtlsCertificate,
  validators: readonly Validator[],
  nonce: Uint8Array,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<AtlsPeerVerdict> {
  for (const ext of cert.extensions) {
    const validator = validators.find((v) => v.variant.oid === ext.oid);
    if (!validator) continue;
    const userData = await validateWithTimeout(validator, ext.value, nonce, options);
    checkUserData(userData, cert.publicKeyHash, 'certificate hash does not match user data');
    return { variant: validator.variant, document: Buffer.from(ext.value) };
  }
  // Same wording as the reference, with the OIDs rendered like Go's %#v of a []string.
  const got = `[]string{${cert.extensions.map((e) => JSON.stringify(e.oid)).join(', ')}}`;
  throw new AtlsError('NO_COMPATIBLE_DOCUMENT', `certificate does not contain compatible attestation documents: got extension OIDs ${got}`, {
    details: { extensionOids: cert.extensions.map((e) => e.oid), acceptedOids: validators.map((v) => v.variant.oid) },
  });
}

/** parse + (when validators are given) document check, for a peer's leaf certificate. */
export async function verifyAtlsCertificate(
  der: Uint8Array | undefined,
  validators: readonly Validator[],
  nonce: Uint8Array,
  options: { now?: Date; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<AtlsPeerVerdict> {
  const cert = parseAtlsCertificate(der, options.now);
  if (validators.length === 0) return {};
  return verifyEmbeddedDocument(cert, validators, nonce, options);
}

/**
 * Runs `validator.validate` with an abort signal that fires after `timeoutMs`; a validator that
 * ignores the signal still loses the race. Rejections become ATTESTATION_INVALID with the
 * attestation reason code in `details.attestationCode`.
 */
export async function validateWithTimeout(
  validator: Validator,
  document: Uint8Array,
  nonce: Uint8Array,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<Uint8Array> {
  const timeoutMs = options.timeoutMs ?? VALIDATION_TIMEOUT_MS;
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new AtlsError('VALIDATION_TIMEOUT', `validating ${validator.variant.name} attestation document timed out after ${timeoutMs} ms`);
      controller.abort(err);
      reject(err);
    }, timeoutMs);
  });
  try {
    return await Promise.race([validator.validate(document, nonce, controller.signal), timeout]);
  } catch (err) {
    if (err instanceof AtlsError) throw err;
    const code = err instanceof AttestationError ? err.code : undefined;
    const why = code ? ` (${code})` : '';
    throw new AtlsError('ATTESTATION_INVALID', `validating ${validator.variant.name} attestation document${why}: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
      details: code ? { attestationCode: code } : {},
    });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}

/** Constant-time comparison of the user data a validator returned with what the key binding expects. */
export function checkUserData(actual: Uint8Array, expected: Buffer, message: string): void {
  const a = Buffer.from(actual);
  if (a.length !== expected.length || !timingSafeEqual(a, expected)) {
    throw new AtlsError('USER_DATA_MISMATCH', message, { details: { expected: expected.toString('hex'), actual: a.toString('hex') } });
  }
}

function checkEku(value: Buffer): void {
  // ExtKeyUsageSyntax ::= SEQUENCE OF OBJECT IDENTIFIER
  let oids: string[];
  try {
    oids = parseOidSequence(value);
  } catch (err) {
    throw new AtlsError('CERT_MALFORMED', `parsing extended key usage: ${(err as Error).message}`, { cause: err });
  }
  if (!oids.some((o) => EKU_OK.has(o))) {
    throw new AtlsError('CERT_EKU_INCOMPATIBLE', `certificate extended key usage ${oids.join(', ')} does not allow server authentication`);
  }
}
