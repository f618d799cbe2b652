import type * as grpc from '@grpc/grpc-js';
import { AtlsError, type AtlsErrorCode } from './errors.js';

/**
 * Failing fast when an aTLS connection dies in the middle of a call (docs/adr/0029).
 *
 * - A reset or close the client sees: the connection guard names the socket error
 *   `[CONNECTION_LOST] ...` (connection-guard.ts), and grpc-js ends the call at once with
 *   UNAVAILABLE and that text.
 * - A connection that died without the client seeing it (the server's host or process gone, a
 *   half-open TCP connection): nothing arrives, and without a probe the call would wait out its
 *   whole deadline. With {@link ATLS_CLIENT_CHANNEL_OPTIONS} grpc-js pings the server every 10 s
 *   while calls are open and drops the connection when a ping is not answered within 5 s, so the
 *   call ends within ~15 s with UNAVAILABLE "Connection dropped".
 *
 * {@link atlsCallError} turns both (and any `[CODE]` an aTLS connector or server put into a
 * status) back into a typed AtlsError whose `retryable` a client's retry loop can ask.
 */

/** Channel options of every aTLS client: keepalive pings while calls are open (our servers accept them). */
export const ATLS_CLIENT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
};

/** What grpc-js says when a connection with calls on it went away (keepalive timeout, GOAWAY, socket closed). */
const DROPPED = /^(Connection dropped|read ECONNRESET|write EPIPE|Received RST_STREAM with code 2 triggered by internal client error: Session closed|.*socket hang up)/;

/** The typed aTLS reason of a failed call, or undefined when the status carries none. */
export function atlsCallError(err: Pick<grpc.ServiceError, 'code' | 'details'>): AtlsError | undefined {
  const tagged = /\[([A-Z_]+)\]\s*(.*)$/s.exec(err.details ?? '');
  if (tagged && isAtlsCode(tagged[1]!)) return new AtlsError(tagged[1] as AtlsErrorCode, tagged[2]!.trim(), { details: { grpcCode: err.code } });
  // UNAVAILABLE (14) with grpc-js's own text for a lost connection.
  if (err.code === 14 && DROPPED.test(err.details ?? '')) return new AtlsError('CONNECTION_LOST', `connection lost during the call: ${err.details}`, { details: { grpcCode: err.code } });
  return undefined;
}

const CODES = new Set<string>([
  'NO_CERTIFICATE', 'CERT_MALFORMED', 'CERT_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_SIGNATURE_INVALID', 'CERT_UNHANDLED_CRITICAL_EXTENSION', 'CERT_EKU_INCOMPATIBLE',
  'NO_COMPATIBLE_DOCUMENT', 'ATTESTATION_INVALID', 'USER_DATA_MISMATCH', 'VALIDATION_TIMEOUT', 'ISSUER_FAILED', 'SNI_INVALID', 'ALPN_MISMATCH', 'HANDSHAKE_FAILED',
  'NO_CLIENT_EVIDENCE', 'EKM_REQUIRES_TLS13', 'PEER_UNKNOWN', 'CONNECTION_LIMIT', 'CONNECTION_LOST', 'TLS_ALERT', 'HANDSHAKE_TIMEOUT', 'ISSUER_TIMEOUT', 'EVIDENCE_TOO_LARGE', 'DIAL_FAILED',
  'ATTESTATION_BUDGET',
] satisfies AtlsErrorCode[]);

function isAtlsCode(code: string): code is AtlsErrorCode {
  return CODES.has(code);
}
