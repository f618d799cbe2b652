/**
 * The TLS context an aTLS server hands each connection (docs/protocol/atls.md), built with as
 * little per-connection work as the connection's needs allow (docs/adr/0026-join-path-performance.md):
 *
 * - The server key is kept for {@link SERVER_KEY_LIFETIME_MS} instead of being made per connection
 *   (the reference makes one per server configuration). It proves possession in the handshake and
 *   its SPKI is what an attestation document binds; a document is still issued over every
 *   client's own nonce.
 * - Without an issuer the certificate carries no document, so it is kept with its key.
 * - Client-attested servers need a context per connection for reference-style clients: the CA
 *   list carries that connection's server nonce, and Node takes the CA list from the context the
 *   SNICallback returns. A client that announced exporter-bound evidence (no server nonce,
 *   docs/adr/0038) gets the shared context without a CA list.
 * - Server-attested servers (certificate per connection, no CA list) keep one context per key and
 *   swap its certificate right before handing it over. Node copies key and certificate into the
 *   connection synchronously inside the SNICallback's callback, so the swap and the callback run in
 *   one synchronous step. Swapping uses the native half of `tls.SecureContext` (`context.setCert`,
 *   what `tls.createSecureContext` itself calls), which Node does not document: when it is missing
 *   the context is built per connection as before (`fastPathAvailable` says which).
 *
 * Building a context means OpenSSL decoding the key and certificate PEM (~0.6 ms CPU on the
 * project's machines); swapping a certificate ~0.25 ms.
 */
import * as tls from 'node:tls';
import type { Issuer } from '@asterism/attestation';
import { createAtlsCertificate, createNonceCaCertificate, generateAtlsKey, type AtlsCertificate, type AtlsKey } from './certificate.js';

/** How long one server key (and, without an issuer, its certificate) is used; the certificate is valid for 2 h either side. */
export const SERVER_KEY_LIFETIME_MS = 10 * 60_000;

/** Hands the connection its context; runs synchronously right before the SNICallback's callback. */
export type ContextInstaller = () => tls.SecureContext;

/** The native context object behind a `tls.SecureContext`, as far as the certificate swap needs it. */
interface CertificateSlot {
  setCert(pem: string): void;
}

/** The native certificate setter of `ctx`, when this Node has it. */
function certificateSlot(ctx: tls.SecureContext): CertificateSlot | undefined {
  const native = (ctx as { context?: unknown }).context as Partial<CertificateSlot> | undefined;
  return typeof native?.setCert === 'function' ? (native as CertificateSlot) : undefined;
}

/** Whether this Node lets a server-attested aTLS server swap certificates in one context (see module comment). */
export const fastPathAvailable: boolean = certificateSlot(tls.createSecureContext()) !== undefined;

/** One server key and what is cached with it. */
interface KeyGeneration {
  key: AtlsKey;
  expiresAt: number;
  /** Without an issuer: the certificate of this key (no document in it). */
  certificate?: AtlsCertificate;
  /** Without a CA list: the context every connection of this key shares. */
  shared?: tls.SecureContext;
}

/** Options of {@link ServerContexts}. */
export interface ServerContextsOptions {
  /** Attests the server: a certificate with a document over each client's nonce. */
  issuer?: Issuer;
  /** Clients must attest: each connection's CA list carries its server nonce. */
  clientAttested: boolean;
  keyLifetimeMs?: number;
  now?: () => number;
}

/** Keys, certificates and TLS contexts of one aTLS server (see module comment). */
export class ServerContexts {
  #current: KeyGeneration | undefined;

  constructor(private readonly o: ServerContextsOptions) {}

  /**
   * Everything one connection needs, built before the handshake continues: the certificate for
   * `clientNonce` (with the issuer's document) and, when `serverNonce` is given (client-attested
   * server, reference-style client), the CA list with it. Rejects when the issuer fails.
   */
  async forConnection(clientNonce: Uint8Array, serverNonce?: Uint8Array, signal?: AbortSignal): Promise<ContextInstaller> {
    const gen = this.#generation();
    const certificate = this.o.issuer
      ? await createAtlsCertificate({ nonce: clientNonce, issuer: this.o.issuer, key: gen.key, ...(signal ? { signal } : {}) })
      : (gen.certificate ??= await createAtlsCertificate({ nonce: clientNonce, key: gen.key }));
    if (serverNonce) {
      if (!this.o.clientAttested) throw new Error('a server nonce needs a client-attested aTLS server');
      const ctx = tls.createSecureContext({ key: gen.key.privateKeyPem, cert: certificate.pem, ca: createNonceCaCertificate(serverNonce, gen.key) });
      return () => ctx;
    }
    const shared = (gen.shared ??= tls.createSecureContext({ key: gen.key.privateKeyPem, cert: certificate.pem }));
    if (!this.o.issuer) return () => shared;
    const slot = certificateSlot(shared);
    if (!slot) {
      const ctx = tls.createSecureContext({ key: gen.key.privateKeyPem, cert: certificate.pem });
      return () => ctx;
    }
    return () => {
      slot.setCert(certificate.pem);
      return shared;
    };
  }

  /** The current key generation; a new key once the lifetime is over. */
  #generation(): KeyGeneration {
    const now = this.o.now?.() ?? Date.now();
    if (!this.#current || now >= this.#current.expiresAt) {
      this.#current = { key: generateAtlsKey(), expiresAt: now + (this.o.keyLifetimeMs ?? SERVER_KEY_LIFETIME_MS) };
    }
    return this.#current;
  }
}
