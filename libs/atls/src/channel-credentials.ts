import type { Socket } from 'node:net';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { SecureConnector, SecureConnectResult } from '@grpc/grpc-js/build/src/experimental.js';
import type { Issuer, Validator } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { AtlsError, toAtlsError } from './errors.js';
import { ATLS_EVIDENCE_METADATA_KEY, evidenceChunks, exporterClientNonce, issueExporterEvidence } from './evidence.js';
import { ConnectionGuard } from './connection-guard.js';
import { fromSourceAddress } from './source-address.js';
import { VALIDATION_TIMEOUT_MS, verifyAtlsCertificate } from './verify.js';

/** Options of {@link atlsChannelCredentials}. */
export interface AtlsChannelOptions {
  /** Server attestation: the server certificate must carry a document one of these accepts. Empty = accept any aTLS server (DialNoVerify). */
  validators?: readonly Validator[];
  /** Client attestation (Node style): evidence over the TLS 1.3 exporter, sent as binary metadata on every call. */
  issuer?: Issuer;
  /** Per-`validate` timeout; default 30 s like the reference. */
  validationTimeoutMs?: number;
  /** TLS handshake deadline per connection. Default 20 s. */
  handshakeTimeoutMs?: number;
  /** Deadline for issuing the client's evidence (a TPM quote). Default 30 s. */
  issuanceTimeoutMs?: number;
  /**
   * Local address every connection comes from (docs/adr/0008: servers that identify peers by
   * source address, e.g. the local cluster's nodes on one loopback interface). Default: the OS's choice.
   */
  localAddress?: string;
  /** Told about every failed connection attempt (a caller can report the last reason). */
  onConnectionError?: (err: AtlsError) => void;
}

/**
 * grpc-js channel credentials for aTLS. The secure connector runs per TCP connection (reconnects
 * included): fresh 32-byte nonce as base64 SNI (a client with an issuer adds the exporter flag
 * byte, evidence.ts), ALPN h2 only (a Go server would otherwise pick
 * http/1.1), then the server certificate is verified asynchronously before grpc-js starts HTTP/2,
 * so no RPC is ever sent to an unverified server. `checkServerIdentity` is not used: Node never
 * calls it for self-signed certificates. Every failure before the hand-over to grpc-js (reset,
 * close, TLS alert, timeout, verification or issuance error) rejects the connection with a typed
 * AtlsError (`retryable` says whether a new attempt may help); none can reach the process as an
 * unhandled 'error' event (see ConnectionGuard).
 */
export class AtlsChannelCredentials extends grpc.ChannelCredentials {
  readonly #opts: AtlsChannelOptions;

  constructor(options: AtlsChannelOptions = {}) {
    super();
    this.#opts = options;
  }

  _isSecure(): boolean {
    return true;
  }

  // Identity: every credentials object gets its own subchannels (and thus its own connections).
  _equals(other: grpc.ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(_target: unknown, _options: grpc.ChannelOptions, callCredentials?: grpc.CallCredentials): SecureConnector {
    return new AtlsConnector(this.#opts, this.#secureContext(), callCredentials ?? grpc.credentials.createEmpty());
  }

  // The client context holds no key or certificate, only the minimum version, so all credentials
  // share two (≈0.15 ms each to create). `minVersion` must live in the context: tls.connect
  // ignores it when a secureContext is passed. With an issuer the exporter binding needs TLS 1.3.
  #secureContext(): tls.SecureContext {
    const v = this.#opts.issuer ? 'TLSv1.3' : 'TLSv1.2';
    let ctx = SHARED_CONTEXTS.get(v);
    if (!ctx) SHARED_CONTEXTS.set(v, (ctx = tls.createSecureContext({ minVersion: v })));
    return ctx;
  }
}

const SHARED_CONTEXTS = new Map<'TLSv1.2' | 'TLSv1.3', tls.SecureContext>();

class AtlsConnector implements SecureConnector {
  /** Evidence of the current connection; the metadata generator reads it at call time. */
  #evidence?: Buffer;
  readonly #callCredentials: grpc.CallCredentials;

  constructor(
    private readonly opts: AtlsChannelOptions,
    private readonly context: tls.SecureContext,
    callCredentials: grpc.CallCredentials,
  ) {
    this.#callCredentials = opts.issuer
      ? callCredentials.compose(
          grpc.credentials.createFromMetadataGenerator((_params, cb) => {
            const md = new grpc.Metadata();
            if (this.#evidence) for (const chunk of evidenceChunks(this.#evidence)) md.add(ATLS_EVIDENCE_METADATA_KEY, chunk);
            cb(null, md);
          }),
        )
      : callCredentials;
  }

  async connect(grpcSocket: Socket): Promise<SecureConnectResult> {
    let socket = grpcSocket;
    if (this.opts.localAddress) {
      try {
        socket = await fromSourceAddress(grpcSocket, this.opts.localAddress, this.opts.handshakeTimeoutMs ?? 20_000);
      } catch (err) {
        throw this.#report(toAtlsError(err, 'DIAL_FAILED', 'aTLS connection'));
      }
    }
    const guard = new ConnectionGuard(socket);
    let tlsSocket: tls.TLSSocket | undefined;
    try {
      // A client with an issuer attests over the exporter and says so in its nonce (docs/adr/0038).
      const nonce = this.opts.issuer ? exporterClientNonce() : generateNonce();
      tlsSocket = await this.#handshake(socket, nonce, guard);
      await this.#verifyServer(tlsSocket, nonce, guard);
      this.#evidence = await this.#issueEvidence(tlsSocket, guard);
      guard.release();
      return { socket: tlsSocket, secure: true };
    } catch (err) {
      // A loss explains whatever the phase then failed with (e.g. no exporter on a dead socket).
      const e = guard.lost ?? toAtlsError(err, 'HANDSHAKE_FAILED', 'aTLS connection');
      guard.release();
      tlsSocket?.destroy();
      socket.destroy();
      throw this.#report(e);
    }
  }

  waitForReady(): Promise<void> {
    return Promise.resolve();
  }

  getCallCredentials(): grpc.CallCredentials {
    return this.#callCredentials;
  }

  destroy(): void {
    this.#evidence = undefined;
  }

  #handshake(socket: Socket, nonce: Buffer, guard: ConnectionGuard): Promise<tls.TLSSocket> {
    const timeoutMs = this.opts.handshakeTimeoutMs ?? 20_000;
    const timeout = () => new AtlsError('HANDSHAKE_TIMEOUT', `TLS handshake did not finish within ${timeoutMs} ms`, { details: { phase: 'handshake', timeoutMs } });
    return guard.phase('handshake', timeoutMs, timeout, (signal) => {
      const t = tls.connect({ socket, servername: nonce.toString('base64'), ALPNProtocols: ['h2'], rejectUnauthorized: false, secureContext: this.context });
      guard.watch(t);
      signal.addEventListener('abort', () => t.destroy(), { once: true });
      return new Promise<tls.TLSSocket>((resolve) => t.once('secureConnect', () => resolve(t)));
    });
  }

  // Server attestation, before any byte of HTTP/2: the certificate must carry a document over our nonce.
  async #verifyServer(tlsSocket: tls.TLSSocket, nonce: Buffer, guard: ConnectionGuard): Promise<void> {
    if (tlsSocket.alpnProtocol !== 'h2') throw new AtlsError('ALPN_MISMATCH', `server negotiated ALPN ${JSON.stringify(tlsSocket.alpnProtocol)}, want "h2"`);
    // Read once: on Node 20 client sockets a second read of the peer certificate returns nothing.
    // The X509Certificate form costs microseconds; getPeerCertificate() builds a full object (~0.1 ms).
    const der = tlsSocket.getPeerX509Certificate()?.raw;
    const timeoutMs = this.opts.validationTimeoutMs ?? VALIDATION_TIMEOUT_MS;
    // verifyAtlsCertificate enforces timeoutMs itself; the guard's own deadline is only a backstop.
    const backstop = () => new AtlsError('VALIDATION_TIMEOUT', `verifying the server took longer than ${timeoutMs} ms`, { details: { phase: 'server-verification' } });
    await guard.phase('server-verification', timeoutMs + 1000, backstop, (signal) =>
      verifyAtlsCertificate(der, this.opts.validators ?? [], nonce, { timeoutMs, signal }).catch((err: unknown) => {
        throw toAtlsError(err, 'ATTESTATION_INVALID', 'verifying aTLS server');
      }),
    );
  }

  // Client attestation (Node style): evidence over this connection's exporter. The issuer gets the
  // phase's signal, so a dropped connection stops it; a vTPM issuer flushes its key either way.
  async #issueEvidence(tlsSocket: tls.TLSSocket, guard: ConnectionGuard): Promise<Buffer | undefined> {
    const issuer = this.opts.issuer;
    if (!issuer) return undefined;
    const timeoutMs = this.opts.issuanceTimeoutMs ?? 30_000;
    const timeout = () => new AtlsError('ISSUER_TIMEOUT', `issuing client evidence took longer than ${timeoutMs} ms`, { details: { phase: 'client-evidence', timeoutMs } });
    return guard.phase('client-evidence', timeoutMs, timeout, (signal) => issueExporterEvidence(issuer, tlsSocket, signal));
  }

  #report(err: AtlsError): AtlsError {
    // `${err}` becomes the subchannel's last error, which grpc-js puts into UNAVAILABLE details.
    this.opts.onConnectionError?.(err);
    return err;
  }
}

/** Channel credentials for aTLS; see {@link AtlsChannelCredentials}. */
export function atlsChannelCredentials(options: AtlsChannelOptions = {}): AtlsChannelCredentials {
  return new AtlsChannelCredentials(options);
}
