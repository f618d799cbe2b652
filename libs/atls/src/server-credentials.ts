import type { TLSSocket } from 'node:tls';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger, type Issuer, type Validator, type Variant } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { PEER_STREAM_LIMITS, RefusalLog } from '@asterism/service-runtime';
import { AddressAdmission, DEFAULT_ADMISSION_LIMITS, peerAddress, type AdmissionLimits } from './address-admission.js';
import { AttestationBudget, type BudgetPoolLimits } from './attestation-budget.js';
import { AtlsError, atlsStatus, toAtlsError } from './errors.js';
import { announcesExporterEvidence, ATLS_EVIDENCE_METADATA_KEY, ATLS_MAX_HEADER_LIST_BYTES, joinEvidenceChunks, verifyExporterEvidence } from './evidence.js';
import { ServerContexts, type ContextInstaller } from './server-contexts.js';
import { verifyAtlsCertificate } from './verify.js';

/** Options of {@link atlsServerCredentials}. */
export interface AtlsServerOptions {
  /** Attests this server: the certificate carries a document over the client's SNI nonce. */
  issuer?: Issuer;
  /**
   * When non-empty, every client must be attested by one of these, either reference-style (client
   * certificate over the CA-list nonce) or Node-style (exporter-bound evidence in metadata).
   */
  clientValidators?: readonly Validator[];
  /** Per-`validate` timeout; default 30 s like the reference. */
  validationTimeoutMs?: number;
  /** TLS connections tracked at once (handshaking or open); further ones are refused. Default 1024. */
  maxConnections?: number;
  /** Concurrent certificate issuances (attestation can be slow); further handshakes are refused. Default 64. */
  maxPendingHandshakes?: number;
  /** Per-address and reserve limits checked before any certificate is built (see AddressAdmission). */
  admission?: Partial<AdmissionLimits>;
  /** TLS handshake deadline. Default 5 s (an unauthenticated peer gets little time). */
  handshakeTimeoutMs?: number;
  /**
   * Client-attested mode: a connection not verified within this time is closed (a verification
   * already running gets its own validation timeout). Default 15 s.
   */
  unverifiedConnectionTimeoutMs?: number;
  /** Global budget for attestation work across all addresses (attestation-budget.ts, docs/adr/0029). */
  budget?: { handshakes?: Partial<BudgetPoolLimits>; validations?: Partial<BudgetPoolLimits> };
  /** Receives rejected peers and refused handshakes (never secrets), aggregated per reason and interval. */
  logger?: AttestationLogger;
  /** Interval of the aggregated refusal lines. Default 10 s. */
  refusalLogIntervalMs?: number;
  /**
   * HTTP/2 streams per connection. grpc-js replaces the server's HTTP/2 settings (where
   * `grpc.max_concurrent_streams` goes) with these credentials' settings, so the cap of the
   * server shape must travel here. Default: the server shape's PEER_STREAM_LIMITS (docs/adr/0027).
   */
  maxConcurrentStreams?: number;
}

/** How a call's peer was verified. */
export interface AtlsPeerInfo {
  /** `certificate`: reference client, CA-list nonce; `exporter`: Node client, EKM evidence; `none`: no client attestation configured. */
  readonly via: 'certificate' | 'exporter' | 'none';
  readonly variant?: Variant;
  /** The attestation document the peer was accepted with (absent in `none` mode). */
  readonly document?: Buffer;
}

interface Connection {
  readonly socket: TLSSocket;
  /** Client-attested mode: the CA-list nonce of a reference-style client (absent: the client announced exporter evidence). */
  readonly serverNonce?: Buffer;
  certVerdict?: Promise<AtlsPeerInfo>;
  exporterVerdict?: Promise<AtlsPeerInfo>;
  verified?: AtlsPeerInfo;
  /** A verification is running (the unverified timer leaves the connection to its timeout). */
  verifying?: boolean;
  unverifiedTimer?: NodeJS.Timeout;
}

/** Marks `conn` as verifying until `verdict` settles. */
function tracked<T>(conn: Connection, verdict: Promise<T>): Promise<T> {
  conn.verifying = true;
  void verdict.finally(() => (conn.verifying = false)).catch(() => undefined);
  return verdict;
}

/**
 * grpc-js server credentials speaking the reference's aTLS (docs/protocol/atls.md) plus exporter-bound client
 * evidence (docs/adr/0004). Per connection: the SNICallback decodes the client nonce and gets the
 * connection's TLS context from ServerContexts (the certificate, with a document over that nonce
 * when the server attests; in client-attested mode a one-entry CA list carrying the server nonce).
 * The credentials install their own interceptor, which holds every call until the peer is
 * verified and otherwise answers UNAUTHENTICATED with `[REASON] message`.
 */
export class AtlsServerCredentials extends grpc.ServerCredentials {
  readonly #opts: AtlsServerOptions;
  readonly #validators: readonly Validator[];
  readonly #logger: AttestationLogger;
  /** Keyed like `call.getPeer()`: remoteAddress:remotePort. */
  readonly #connections = new Map<string, Connection>();
  readonly #admission: AddressAdmission;
  readonly #contexts: ServerContexts;
  readonly #budget: AttestationBudget;
  readonly #refusedLog: RefusalLog;
  readonly #rejectedLog: RefusalLog;

  constructor(options: AtlsServerOptions = {}) {
    const validators = options.clientValidators ?? [];
    // The SNICallback needs the instance, which does not exist until super() returns.
    const ref: { creds?: AtlsServerCredentials } = {};
    super(
      {
        // Node calls SNICallback with the server-side TLSSocket as `this` and holds the handshake until cb.
        // The installer and cb run in one synchronous step (server-contexts.ts: a shared context's
        // certificate is swapped right before Node copies it into the connection).
        SNICallback(this: TLSSocket, servername: string, cb: (err: Error | null, ctx?: tls.SecureContext) => void) {
          ref.creds!.#onSni(this, servername).then(
            (install) => cb(null, install()),
            (err: unknown) => cb(err as Error),
          );
        },
        requestCert: validators.length > 0,
        // Self-signed client certificates never chain; attestation decides instead.
        rejectUnauthorized: false,
        minVersion: 'TLSv1.2',
        handshakeTimeout: options.handshakeTimeoutMs ?? 5_000,
        // grpc-js passes these to http2.createSecureServer: room for base64 client evidence in a
        // header (Node's default of 64 KiB refused ~46 KiB of evidence with a bare REFUSED_STREAM).
        settings: { maxHeaderListSize: ATLS_MAX_HEADER_LIST_BYTES, maxConcurrentStreams: options.maxConcurrentStreams ?? PEER_STREAM_LIMITS.maxConcurrentStreams },
      } as never,
      // Default context without a certificate: clients that send no SNI fail the handshake.
      {},
    );
    ref.creds = this;
    this.#opts = options;
    this.#validators = validators;
    this.#logger = options.logger ?? NOP_ATTESTATION_LOGGER;
    this.#contexts = new ServerContexts({ ...(options.issuer ? { issuer: options.issuer } : {}), clientAttested: validators.length > 0 });
    this.#admission = new AddressAdmission({
      ...(options.maxConnections !== undefined ? { maxConnections: options.maxConnections, reservedConnections: Math.min(DEFAULT_ADMISSION_LIMITS.reservedConnections, Math.floor(options.maxConnections / 4)) } : {}),
      ...(options.maxPendingHandshakes !== undefined ? { maxPendingHandshakes: options.maxPendingHandshakes } : {}),
      ...options.admission,
    });
    this.#budget = new AttestationBudget(options.budget, (reason) => this.#admission.count(reason));
    // A flood must not grow the log without bound: one line per reason and interval (docs/adr/0029).
    const interval = { intervalMs: options.refusalLogIntervalMs ?? 10_000, linesPerInterval: 5 };
    this.#refusedLog = new RefusalLog(this.#logger, 'refused aTLS handshake', interval);
    this.#rejectedLog = new RefusalLog(this.#logger, 'rejected aTLS peer', interval);
  }

  /** The budget's pools (jobs started, queued), for tests and metrics. */
  get budget(): AttestationBudget {
    return this.#budget;
  }

  /** Connections refused before attestation (and unverified ones closed), by reason: for metrics. */
  get refusals(): Readonly<Record<string, number>> {
    return this.#admission.refusals;
  }

  /** Connections admitted past the pre-attestation limits so far (with {@link refusals}: every handshake attempt counted). */
  get admitted(): number {
    return this.#admission.admitted;
  }

  /** Number of tracked connections (for tests and metrics). */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /** The verified peer of a call on a server bound with these credentials. */
  peerOf(call: { getPeer(): string }): AtlsPeerInfo | undefined {
    return this.#connections.get(call.getPeer())?.verified;
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }

  /** grpc-js applies these to every call on ports bound with these credentials. */
  override _getInterceptors(): grpc.ServerInterceptor[] {
    return this.#validators.length > 0 ? [(_method, call) => this.#gate(call)] : [];
  }

  async #onSni(socket: TLSSocket, servername: string): Promise<ContextInstaller> {
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    const address = peerAddress(socket.remoteAddress);
    const nonce = Buffer.from(servername, 'base64');
    if (nonce.length === 0 || nonce.toString('base64') !== servername) {
      this.#admission.count('SNI_INVALID');
      throw this.#refuse(new AtlsError('SNI_INVALID', `server name ${JSON.stringify(servername.slice(0, 64))} is not a base64 nonce`));
    }
    if (this.#connections.has(peer)) {
      this.#admission.count('DUPLICATE_PEER');
      throw this.#refuse(new AtlsError('HANDSHAKE_FAILED', `refusing ${peer}: peer address already tracked`));
    }
    // Limits first: a refused peer costs no key, no certificate, no attestation.
    const refused = this.#admission.admit(address);
    if (refused) throw this.#refuse(new AtlsError('CONNECTION_LIMIT', `refusing ${peer}: ${refused}`, { details: { reason: refused } }));
    const clientAttested = this.#validators.length > 0;
    // A client announcing exporter evidence needs no CA-list nonce and gets the shared context (docs/adr/0038).
    const conn: Connection = { socket, serverNonce: clientAttested && !announcesExporterEvidence(nonce) ? generateNonce() : undefined };
    this.#connections.set(peer, conn);
    socket.once('close', () => {
      clearTimeout(conn.unverifiedTimer);
      this.#admission.closed(address);
      if (this.#connections.get(peer) === conn) this.#connections.delete(peer);
    });
    if (clientAttested) socket.once('secure', () => this.#onSecure(peer, conn));
    try {
      return await this.#budget.handshakes.run(address, () => this.#contexts.forConnection(nonce, conn.serverNonce));
    } catch (err) {
      throw this.#refuse(toAtlsError(err, 'HANDSHAKE_FAILED', `building aTLS certificate for ${peer}`));
    } finally {
      this.#admission.issued(address);
    }
  }

  // Client-attested mode, handshake done: verify a presented certificate right away (as the
  // reference does inside the handshake) and bound the time until the peer proves itself.
  #onSecure(peer: string, conn: Connection): void {
    const address = peerAddress(conn.socket.remoteAddress);
    const timeout = this.#opts.unverifiedConnectionTimeoutMs ?? 15_000;
    conn.unverifiedTimer = setTimeout(() => {
      // A verification under way is bounded by its own validation timeout.
      if (!conn.verified && !conn.verifying) {
        this.#admission.count('UNVERIFIED_TIMEOUT');
        this.#rejectedLog.refused('UNVERIFIED_TIMEOUT', { peer, timeoutMs: timeout });
        conn.socket.destroy();
      }
    }, timeout);
    conn.unverifiedTimer.unref();
    // Without a server nonce (exporter client) a certificate cannot carry valid evidence: only the
    // exporter evidence of the calls counts.
    const der = conn.serverNonce ? conn.socket.getPeerX509Certificate()?.raw : undefined;
    if (der && der.length > 0) {
      conn.certVerdict = tracked(
        conn,
        this.#budget.validations.run(address, () => verifyAtlsCertificate(der, this.#validators, conn.serverNonce!, { timeoutMs: this.#opts.validationTimeoutMs })).then((v) => ({ via: 'certificate' as const, variant: v.variant, document: v.document })),
      );
      // Logged when it happens (aggregated): a peer that never makes a call is still seen.
      conn.certVerdict.catch((err: unknown) => {
        const e = toAtlsError(err, 'ATTESTATION_INVALID', 'verifying client certificate');
        this.#rejectedLog.refused(e.code, { peer, code: e.code, reason: e.message });
      });
    }
  }

  async #authorize(peer: string, metadata: grpc.Metadata): Promise<AtlsPeerInfo> {
    const conn = this.#connections.get(peer);
    if (!conn) throw new AtlsError('PEER_UNKNOWN', `no aTLS connection state for ${peer}`);
    if (conn.verified) return conn.verified;
    let verdict = conn.certVerdict ?? conn.exporterVerdict;
    if (!verdict) {
      const evidence = joinEvidenceChunks(metadata.get(ATLS_EVIDENCE_METADATA_KEY));
      if (!evidence) {
        throw new AtlsError('NO_CLIENT_EVIDENCE', 'client attestation required: no client certificate and no exporter-bound evidence');
      }
      verdict = conn.exporterVerdict = tracked(
        conn,
        this.#budget.validations.run(peerAddress(conn.socket.remoteAddress), () => verifyExporterEvidence(evidence, conn.socket, this.#validators, { timeoutMs: this.#opts.validationTimeoutMs })).then((v) => ({ via: 'exporter' as const, variant: v.variant, document: v.document })),
      );
    }
    const info = await verdict;
    conn.verified = info;
    clearTimeout(conn.unverifiedTimer);
    return info;
  }

  #gate(call: grpc.ServerInterceptingCallInterface): grpc.ServerInterceptingCall {
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, mdNext) => {
            const peer = call.getPeer();
            this.#authorize(peer, metadata).then(
              () => {
                metadata.remove(ATLS_EVIDENCE_METADATA_KEY);
                mdNext(metadata);
              },
              (err: unknown) => {
                const e = toAtlsError(err, 'ATTESTATION_INVALID', 'verifying client');
                this.#rejectedLog.refused(e.code, { peer, code: e.code, reason: e.message });
                call.sendStatus(atlsStatus(e));
              },
            );
          },
        }),
    });
  }

  #refuse(err: AtlsError): AtlsError {
    // Under a flood every refusal would be a log line: one per reason and interval.
    this.#refusedLog.refused(String(err.details.reason ?? err.code), { code: err.code, reason: err.message });
    return err;
  }
}

/** Server credentials for aTLS; see {@link AtlsServerCredentials}. */
export function atlsServerCredentials(options: AtlsServerOptions = {}): AtlsServerCredentials {
  return new AtlsServerCredentials(options);
}
