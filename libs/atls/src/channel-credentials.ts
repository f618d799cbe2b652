import type { Socket } from 'node:net';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { SecureConnector, SecureConnectResult } from '@grpc/grpc-js/build/src/experimental.js';
import type { Issuer, Validator } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { AtlsError, toAtlsError } from './errors.js';
import { ATLS_EVIDENCE_METADATA_KEY, issueExporterEvidence } from './evidence.js';
import { verifyAtlsCertificate } from './verify.js';

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
  /** Told about every failed connection attempt (the dialer uses it to report the last reason). */
  onConnectionError?: (err: AtlsError) => void;
}

/**
 * grpc-js channel credentials for aTLS. The secure connector runs per TCP connection (reconnects
 * included): fresh 32-byte nonce as base64 SNI, ALPN h2 only (a Go server would otherwise pick
 * http/1.1), then the server certificate is verified asynchronously before grpc-js starts HTTP/2,
 * so no RPC is ever sent to an unverified server. `checkServerIdentity` is not used: Node never
 * calls it for self-signed certificates.
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
            if (this.#evidence) md.set(ATLS_EVIDENCE_METADATA_KEY, this.#evidence);
            cb(null, md);
          }),
        )
      : callCredentials;
  }

  async connect(socket: Socket): Promise<SecureConnectResult> {
    const nonce = generateNonce();
    const tlsSocket = await this.#handshake(socket, nonce).catch((err: unknown) => {
      throw this.#report(toAtlsError(err, 'HANDSHAKE_FAILED', 'aTLS handshake'));
    });
    try {
      if (tlsSocket.alpnProtocol !== 'h2') throw new AtlsError('ALPN_MISMATCH', `server negotiated ALPN ${JSON.stringify(tlsSocket.alpnProtocol)}, want "h2"`);
      // Read once: on Node 20 client sockets a second read of the peer certificate returns nothing.
      const der = tlsSocket.getPeerCertificate()?.raw;
      await verifyAtlsCertificate(der, this.opts.validators ?? [], nonce, { timeoutMs: this.opts.validationTimeoutMs });
      this.#evidence = this.opts.issuer ? await issueExporterEvidence(this.opts.issuer, tlsSocket) : undefined;
    } catch (err) {
      tlsSocket.destroy();
      throw this.#report(toAtlsError(err, 'ATTESTATION_INVALID', 'verifying aTLS server'));
    }
    return { socket: tlsSocket, secure: true };
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

  #handshake(socket: Socket, nonce: Buffer): Promise<tls.TLSSocket> {
    const timeoutMs = this.opts.handshakeTimeoutMs ?? 20_000;
    return new Promise((resolve, reject) => {
      const t = tls.connect(
        { socket, servername: nonce.toString('base64'), ALPNProtocols: ['h2'], rejectUnauthorized: false, secureContext: this.context },
        () => {
          clearTimeout(timer);
          t.off('error', onError);
          resolve(t);
        },
      );
      const onError = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      const timer = setTimeout(() => {
        t.destroy();
        reject(new AtlsError('HANDSHAKE_FAILED', `TLS handshake did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      t.once('error', onError);
    });
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
