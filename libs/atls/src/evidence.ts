import type { TLSSocket } from 'node:tls';
import type { Issuer, Validator } from '@asterism/attestation';
import { derOid, derTlv, generateNonce } from '@asterism/crypto';
import { parseExtension } from './der.js';
import { AtlsError, toAtlsError } from './errors.js';
import { checkUserData, validateWithTimeout, type AtlsPeerVerdict } from './verify.js';

/**
 * Binary metadata key carrying a Node client's attestation evidence (docs/adr/0004). gRPC
 * base64-encodes `-bin` values on the wire.
 */
export const ATLS_EVIDENCE_METADATA_KEY = 'x-atls-attestation-bin';
/** RFC 5705/8446 exporter label for the client-attestation channel binding. */
export const ATLS_EXPORTER_LABEL = 'EXPORTER-asterism-atls-client-attestation';
/** Length of the exported keying material (the document's nonce and user data). */
export const ATLS_EXPORTER_LENGTH = 32;
/**
 * Largest client evidence (DER bytes) a Node client sends and an aTLS server accepts. A vTPM
 * document from swtpm without an event log is ~9 KiB (quotes of four PCR banks, AK, user data);
 * the firmware event log comes on top, base64-encoded, so at 4/3 of its size. Real logs measured
 * (sources in docs/adr/0007-unauthenticated-abuse-limits.md):
 * - 43,324 B: Windows on a Google Compute Engine Shielded VM (SHA-1 format, boot manager events included);
 * - 18,995 B: an el9 Linux VM with UEFI Secure Boot, shim and GRUB (crypto-agile, SHA-256);
 * - 13,778 B: a Lenovo ThinkPad with TPM 1.2 booting Debian's shim and GRUB.
 * The largest makes a 66,810 B document (evidence-size.int.spec.ts), half the limit; a log filling
 * EDK2's default 64 KiB log area makes 96,426 B. Firmware that reserves 128 KiB for the log (the
 * Hyper-V firmware does, because Linux boots overflowed 64 KiB) could exceed the limit: the ADR
 * says what is open. Evidence travels in headers, so the servers' HTTP/2 header list limit is raised to
 * {@link ATLS_MAX_HEADER_LIST_BYTES} and larger evidence is refused with a reason instead of a bare
 * REFUSED_STREAM. 128 KiB is what Node's HTTP/2 carried reliably in our tests (160 KiB already
 * reset the stream).
 */
export const ATLS_MAX_EVIDENCE_BYTES = 128 * 1024;
/** HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE of aTLS servers: base64 evidence plus headroom. */
export const ATLS_MAX_HEADER_LIST_BYTES = 256 * 1024;
/**
 * Evidence is sent as consecutive values of the metadata key, each at most this many bytes:
 * nghttp2 refuses a single header field over 64 KiB (COMPRESSION_ERROR), whatever the list limit.
 * Evidence up to this size is one value, exactly as before (docs/adr/0004).
 */
export const ATLS_EVIDENCE_CHUNK_BYTES = 32 * 1024;

/**
 * Last byte of the client nonce of a client that attests with exporter-bound evidence (docs/adr/0038):
 * its SNI nonce is 32 random bytes and this flag (33 bytes, 44 base64 characters like a plain
 * nonce). Such a client never reads the CertificateRequest's CA-list nonce, so a client-attested
 * server hands it the TLS context it shares across connections instead of building one per
 * connection. Servers that do not know the flag treat it as a nonce of 33 bytes (any length
 * works); reference clients send 32 bytes and keep the CA-list nonce.
 */
export const ATLS_EXPORTER_NONCE_FLAG = 0x01;
const NONCE_BYTES = 32;

/** A fresh client nonce announcing exporter-bound client evidence (see {@link ATLS_EXPORTER_NONCE_FLAG}). */
export function exporterClientNonce(): Buffer {
  const nonce = Buffer.allocUnsafe(NONCE_BYTES + 1);
  generateNonce().copy(nonce);
  nonce[NONCE_BYTES] = ATLS_EXPORTER_NONCE_FLAG;
  return nonce;
}

/** Whether a client nonce (the decoded SNI) announces exporter-bound client evidence. */
export function announcesExporterEvidence(nonce: Uint8Array): boolean {
  return nonce.length === NONCE_BYTES + 1 && nonce[NONCE_BYTES] === ATLS_EXPORTER_NONCE_FLAG;
}

/** Splits evidence into metadata values of at most {@link ATLS_EVIDENCE_CHUNK_BYTES}. */
export function evidenceChunks(evidence: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < evidence.length; at += ATLS_EVIDENCE_CHUNK_BYTES) out.push(evidence.subarray(at, at + ATLS_EVIDENCE_CHUNK_BYTES));
  return out;
}

/** Joins the metadata values back into the evidence; undefined when there is none or a value is not binary. */
export function joinEvidenceChunks(values: readonly (string | Buffer)[]): Buffer | undefined {
  if (values.length === 0 || !values.every((v) => Buffer.isBuffer(v))) return undefined;
  checkEvidenceSize(values.reduce((n, v) => n + v.length, 0));
  return Buffer.concat(values as Buffer[]);
}

/**
 * The TLS 1.3 exporter value of a connection. It depends on both handshake randoms and the ECDHE
 * secret, so evidence bound to it cannot be replayed on another connection. TLS 1.2 is refused:
 * without extended master secret its exporter is not a safe channel binding.
 */
export function exportedKeyingMaterial(socket: TLSSocket): Buffer {
  const version = socket.getProtocol();
  if (version !== 'TLSv1.3') throw new AtlsError('EKM_REQUIRES_TLS13', `client attestation over exported keying material needs TLS 1.3, connection uses ${version ?? 'no TLS'}`);
  return socket.exportKeyingMaterial(ATLS_EXPORTER_LENGTH, ATLS_EXPORTER_LABEL, Buffer.alloc(0));
}

/**
 * Issues the client's evidence for a connection: a document over (nonce = E, userData = E) with E
 * the exporter value, wrapped as a DER X.509 `Extension` {variant OID, document} so the server
 * finds the matching validator exactly as it would in a certificate.
 */
export async function issueExporterEvidence(issuer: Issuer, socket: TLSSocket, signal?: AbortSignal): Promise<Buffer> {
  const ekm = exportedKeyingMaterial(socket);
  let doc: Uint8Array;
  try {
    doc = await issuer.issue(ekm, ekm, signal);
  } catch (err) {
    throw toAtlsError(err, 'ISSUER_FAILED', 'issuing client attestation document');
  }
  const evidence = encodeEvidenceExtension(issuer.variant.oid, Buffer.from(doc.buffer, doc.byteOffset, doc.byteLength));
  checkEvidenceSize(evidence.length);
  return evidence;
}

/** DER `Extension { extnID = oid, extnValue = document }` (critical FALSE, the default, left out as DER requires). */
export function encodeEvidenceExtension(oid: string, document: Buffer): Buffer {
  return derTlv(0x30, derOid(oid), derTlv(0x04, document));
}

/** Refuses evidence over {@link ATLS_MAX_EVIDENCE_BYTES} with a reason both sides can read. */
export function checkEvidenceSize(length: number): void {
  if (length > ATLS_MAX_EVIDENCE_BYTES) {
    throw new AtlsError('EVIDENCE_TOO_LARGE', `client evidence is ${length} bytes, the limit is ${ATLS_MAX_EVIDENCE_BYTES}`, {
      details: { length, limit: ATLS_MAX_EVIDENCE_BYTES },
    });
  }
}

/** Server side of the exporter binding: decode, pick the validator by OID, validate over E, compare user data. */
export async function verifyExporterEvidence(
  evidence: Uint8Array,
  socket: TLSSocket,
  validators: readonly Validator[],
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<AtlsPeerVerdict> {
  checkEvidenceSize(evidence.length);
  const ekm = exportedKeyingMaterial(socket);
  let ext: { oid: string; value: Buffer };
  try {
    // The strict DER reader (der.ts), not the generic ASN.1 stack: ~0.3 ms less per connection (docs/adr/0038).
    ext = parseExtension(Buffer.from(evidence.buffer, evidence.byteOffset, evidence.byteLength));
  } catch (err) {
    throw new AtlsError('CERT_MALFORMED', `decoding ${ATLS_EVIDENCE_METADATA_KEY}: ${(err as Error).message}`, { cause: err });
  }
  const validator = validators.find((v) => v.variant.oid === ext.oid);
  if (!validator) {
    throw new AtlsError('NO_COMPATIBLE_DOCUMENT', `client evidence does not contain compatible attestation documents: got OID ${JSON.stringify(ext.oid)}`, {
      details: { extensionOids: [ext.oid], acceptedOids: validators.map((v) => v.variant.oid) },
    });
  }
  // A copy: the verdict keeps the document while the metadata buffer is released.
  const document = Buffer.from(ext.value);
  const userData = await validateWithTimeout(validator, document, ekm, options);
  checkUserData(userData, ekm, 'client evidence is not bound to this TLS connection');
  return { variant: validator.variant, document };
}
