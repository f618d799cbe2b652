import * as grpc from '@grpc/grpc-js';
import { AsterismError } from '@asterism/errors';
import { toStatus, type RpcStatus } from '@asterism/service-runtime';

/**
 * Reason codes of aTLS failures. Certificate problems ("crypto says no") and attestation
 * problems ("policy says no", carried in `cause` as an AttestationError) are distinct codes.
 */
export type AtlsErrorCode =
  | 'NO_CERTIFICATE'
  | 'CERT_MALFORMED'
  | 'CERT_EXPIRED'
  | 'CERT_NOT_YET_VALID'
  | 'CERT_SIGNATURE_INVALID'
  | 'CERT_UNHANDLED_CRITICAL_EXTENSION'
  | 'CERT_EKU_INCOMPATIBLE'
  | 'NO_COMPATIBLE_DOCUMENT'
  | 'ATTESTATION_INVALID'
  | 'USER_DATA_MISMATCH'
  | 'VALIDATION_TIMEOUT'
  | 'ISSUER_FAILED'
  | 'SNI_INVALID'
  | 'ALPN_MISMATCH'
  | 'HANDSHAKE_FAILED'
  | 'NO_CLIENT_EVIDENCE'
  | 'EKM_REQUIRES_TLS13'
  | 'PEER_UNKNOWN'
  | 'CONNECTION_LIMIT'
  | 'CONNECTION_LOST'
  | 'TLS_ALERT'
  | 'HANDSHAKE_TIMEOUT'
  | 'ISSUER_TIMEOUT'
  | 'EVIDENCE_TOO_LARGE'
  | 'DIAL_FAILED'
  | 'ATTESTATION_BUDGET';

/**
 * Codes that say something about the peer or its attestation (a verdict), so repeating the same
 * attempt against the same peer gives the same answer. Every other code is a fault of the moment
 * (connection lost, timeout, refused for load, TPM busy) that a retry may cure.
 */
const FINAL_CODES: ReadonlySet<AtlsErrorCode> = new Set<AtlsErrorCode>([
  'NO_CERTIFICATE',
  'CERT_MALFORMED',
  'CERT_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_INVALID',
  'CERT_UNHANDLED_CRITICAL_EXTENSION',
  'CERT_EKU_INCOMPATIBLE',
  'NO_COMPATIBLE_DOCUMENT',
  'ATTESTATION_INVALID',
  'USER_DATA_MISMATCH',
  'SNI_INVALID',
  'ALPN_MISMATCH',
  'NO_CLIENT_EVIDENCE',
  'EKM_REQUIRES_TLS13',
  'TLS_ALERT',
  'EVIDENCE_TOO_LARGE',
]);

/** An aTLS handshake or verification failure with a stable reason code. */
export class AtlsError extends AsterismError<AtlsErrorCode> {
  /** Whether trying again (new connection, fresh nonce) may succeed; false for verdicts about the peer. */
  get retryable(): boolean {
    return !FINAL_CODES.has(this.code);
  }

  /** `[CODE] message`: the form that reaches gRPC status details, so peers see the reason code. */
  get reason(): string {
    return `[${this.code}] ${this.message}`;
  }

  /** grpc-js renders connector failures with `${err}`; keep the code in that text. */
  override toString(): string {
    return `${this.name}: ${this.reason}`;
  }
}

/** Normalises any failure into an AtlsError, keeping AtlsErrors as they are. */
export function toAtlsError(err: unknown, fallback: AtlsErrorCode, context: string): AtlsError {
  if (err instanceof AtlsError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  return new AtlsError(fallback, `${context}: ${msg}`, { cause: err });
}

/** Metadata key of the aTLS reason, kept beside the common reason key for clients that read it. */
export const ATLS_REASON_METADATA = 'x-atls-reason';

const U = grpc.status.UNAUTHENTICATED;
/** Every aTLS refusal of a call is UNAUTHENTICATED (the peer did not prove what it must), except budget refusals (typed: no code can be missing). */
const ATLS_STATUS_OF: Record<AtlsErrorCode, grpc.status> = {
  NO_CERTIFICATE: U,
  CERT_MALFORMED: U,
  CERT_EXPIRED: U,
  CERT_NOT_YET_VALID: U,
  CERT_SIGNATURE_INVALID: U,
  CERT_UNHANDLED_CRITICAL_EXTENSION: U,
  CERT_EKU_INCOMPATIBLE: U,
  NO_COMPATIBLE_DOCUMENT: U,
  ATTESTATION_INVALID: U,
  USER_DATA_MISMATCH: U,
  VALIDATION_TIMEOUT: U,
  ISSUER_FAILED: U,
  SNI_INVALID: U,
  ALPN_MISMATCH: U,
  HANDSHAKE_FAILED: U,
  NO_CLIENT_EVIDENCE: U,
  EKM_REQUIRES_TLS13: U,
  PEER_UNKNOWN: U,
  CONNECTION_LIMIT: U,
  CONNECTION_LOST: U,
  TLS_ALERT: U,
  HANDSHAKE_TIMEOUT: U,
  ISSUER_TIMEOUT: U,
  EVIDENCE_TOO_LARGE: U,
  DIAL_FAILED: U,
  // The global attestation budget refusing is load, not a verdict: UNAVAILABLE, which clients retry (docs/adr/0029).
  ATTESTATION_BUDGET: grpc.status.UNAVAILABLE,
};

/**
 * The status a server answers a call with when the peer's attestation fails: through the one
 * error-to-status function (docs/adr/0027), reason = the aTLS code, text `atls: [CODE] message`.
 */
export function atlsStatus(err: AtlsError): RpcStatus {
  const status = toStatus(err, ATLS_STATUS_OF, { describe: () => `atls: ${err.reason}` });
  status.metadata.set(ATLS_REASON_METADATA, err.code);
  return status;
}
