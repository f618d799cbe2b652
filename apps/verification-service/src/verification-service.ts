import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Issuer } from '@asterism/attestation';
import { decodeBase64UrlPadded } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import { verify } from '@asterism/proto';
import { GrpcServer, toStatus } from '@asterism/service-runtime';
import { VerifyRateLimit } from './rate-limit.js';

/** User data every verification-service document is issued over (docs/protocol/verification.md). */
export const VERIFY_USER_DATA = Buffer.from('VerifyService', 'ascii');
/** Ports of the reference's verification service as NodePorts: gRPC and HTTP. */
export const VERIFY_GRPC_NODE_PORT = 30081;
export const VERIFY_HTTP_NODE_PORT = 30080;
/** Upper bound for a caller's nonce (the reference had none). */
const MAX_NONCE = 1024;

/** A GetAttestation request that cannot be answered (the caller's mistake, or its rate). */
export class VerifyRequestError extends AsterismError<'INVALID_REQUEST' | 'RATE_LIMITED'> {}

/** The gRPC answer table; issuer failures are INTERNAL (cause logged, not sent). */
const STATUS_OF: Record<VerifyRequestError['code'], grpc.status> = { INVALID_REQUEST: grpc.status.INVALID_ARGUMENT, RATE_LIMITED: grpc.status.RESOURCE_EXHAUSTED };

/** Options of the verification service. */
export interface VerificationServiceOptions {
  /** Per-address limit shared by gRPC and HTTP (docs/adr/0029). Default: VERIFY_RATE. */
  rateLimit?: VerifyRateLimit;
}

function rateLimited(retryAfter: number): VerifyRequestError {
  return new VerifyRequestError('RATE_LIMITED', `too many attestation requests from this address; retry in ${retryAfter} s`, { details: { retryAfter } });
}

/** The caller's nonce must be non-empty and bounded. */
function checkNonce(nonce: Uint8Array): void {
  if (nonce.length === 0) throw new VerifyRequestError('INVALID_REQUEST', 'nonce is required to issue attestation');
  if (nonce.length > MAX_NONCE) throw new VerifyRequestError('INVALID_REQUEST', `nonce is longer than ${MAX_NONCE} bytes`);
}

/**
 * The verification service of a running node (docs/protocol/verification.md): plain gRPC
 * `verify.API/GetAttestation` and HTTP `GET /?nonce=<base64url>`, both answering with an
 * attestation document over user data "VerifyService" and the caller's nonce. No aTLS: the nonce
 * inside the document gives the caller freshness.
 */
export class VerificationService {
  readonly grpcServer: grpc.Server;
  readonly #shape: GrpcServer;
  readonly #http: Server;
  readonly #rate: VerifyRateLimit;

  constructor(
    private readonly issuer: Issuer,
    private readonly logger: Logger,
    options: VerificationServiceOptions = {},
  ) {
    this.#rate = options.rateLimit ?? new VerifyRateLimit(logger);
    // The one server shape (docs/adr/0027); no health service (the reference's has none). A
    // successful call is a debug line: any client may ask for quotes at a high rate.
    this.#shape = new GrpcServer({ logger, okCallLogLevel: 'debug', failedCallLogLevel: 'debug' });
    this.grpcServer = this.#shape.server;
    this.grpcServer.addService(verify.APIService, {
      getAttestation: (call: grpc.ServerUnaryCall<verify.GetAttestationRequest, verify.GetAttestationResponse>, done: grpc.sendUnaryData<verify.GetAttestationResponse>) => {
        Promise.resolve(call.request.nonce)
          .then((nonce) => {
            checkNonce(nonce);
            const wait = this.#rate.refuse(call.getPeer());
            if (wait !== undefined) throw rateLimited(wait);
            return this.issue(nonce);
          })
          .then(
            (attestation) => done(null, { attestation }),
            (err: unknown) => {
              const status = toStatus(err, STATUS_OF);
              if (status.internal) this.logger.error('issuing verification attestation failed', { err });
              done(status);
            },
          );
      },
    });
    this.#http = createServer((req, res) => void this.handleHttp(req, res));
  }

  /** Requests refused by the per-address rate limit so far, by reason. */
  get refusals(): Readonly<Record<string, number>> {
    return this.#rate.refusals;
  }

  /** Binds gRPC and HTTP on `host`; resolves with the bound ports. */
  async listen(host: string, ports: { grpc: number; http: number }): Promise<{ grpc: number; http: number }> {
    const grpcPort = await this.#shape.listen(host, ports.grpc, grpc.ServerCredentials.createInsecure());
    await new Promise<void>((resolve, reject) => {
      this.#http.once('error', reject);
      this.#http.listen(ports.http, host, () => resolve());
    });
    return { grpc: grpcPort, http: (this.#http.address() as AddressInfo).port };
  }

  /** Stops both servers. */
  async close(): Promise<void> {
    await this.#shape.drain();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  private async issue(nonce: Uint8Array): Promise<Buffer> {
    const doc = await this.issuer.issue(VERIFY_USER_DATA, nonce);
    this.logger.debug('verification attestation issued');
    return Buffer.from(doc);
  }

  private async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://node');
    const nonces = url.searchParams.getAll('nonce');
    if (req.method !== 'GET' || url.pathname !== '/') return reply(res, 404, 'not found');
    if (nonces.length !== 1 || !nonces[0]) return reply(res, 400, 'exactly one non-empty nonce parameter is required');
    const nonce = decodeNonce(nonces[0]);
    if (!nonce) return reply(res, 400, 'nonce is not URL-safe base64 with padding');
    if (nonce.length > MAX_NONCE) return reply(res, 400, `nonce is longer than ${MAX_NONCE} bytes`);
    const wait = this.#rate.refuse(httpPeer(req));
    if (wait !== undefined) {
      res.setHeader('retry-after', String(wait));
      return reply(res, 429, rateLimited(wait).message);
    }
    try {
      const doc = await this.issue(nonce);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: doc.toString('base64') }));
    } catch (err) {
      this.logger.error('issuing verification attestation failed', { err });
      reply(res, 500, 'internal error');
    }
  }
}

/** The caller as grpc-js names a peer (`host:port`, IPv6 in brackets), so both endpoints share one bucket per host. */
function httpPeer(req: IncomingMessage): string {
  const host = req.socket.remoteAddress ?? 'unknown';
  return host.includes(':') ? `[${host}]:${req.socket.remotePort}` : `${host}:${req.socket.remotePort}`;
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
}

function decodeNonce(text: string): Buffer | undefined {
  try {
    const out = decodeBase64UrlPadded(text);
    return out.length === 0 ? undefined : out;
  } catch {
    return undefined;
  }
}
