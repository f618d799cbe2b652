import * as grpc from '@grpc/grpc-js';
import type { Issuer, Validator } from '@asterism/attestation';
import { atlsChannelCredentials } from './channel-credentials.js';
import { AtlsError } from './errors.js';

/** A generated grpc-js client constructor (e.g. `join.APIClient`). */
export type GrpcClientConstructor<C extends grpc.Client> = new (address: string, credentials: grpc.ChannelCredentials, options?: Partial<grpc.ClientOptions>) => C;

/** Options of {@link dialAtls}. */
export interface DialAtlsOptions {
  /** Attest ourselves (Node style, exporter-bound evidence). */
  issuer?: Issuer;
  /** Verify the server; empty/absent = DialNoVerify (any aTLS server, nothing attested). */
  validators?: readonly Validator[];
  /** Plaintext gRPC (DialInsecure); issuer and validators must then be absent. */
  insecure?: boolean;
  /** Give up when no connection is ready by then. Default 30 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** First and largest pause between connection attempts. Defaults 1 s and 10 s. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Extra channel options. */
  channelOptions?: Partial<grpc.ClientOptions>;
}

/**
 * docs/protocol/atls.md dialer: a client whose connection is up and verified. Connection attempts repeat
 * with exponential backoff (every attempt is a new TCP connection with a fresh nonce) until
 * `timeoutMs`; the error then names the last attempt's reason code. Once returned, the client
 * reconnects by itself with the same credentials (again fresh nonces).
 */
export async function dialAtls<C extends grpc.Client>(Client: GrpcClientConstructor<C>, target: string, options: DialAtlsOptions = {}): Promise<C> {
  if (options.insecure && (options.issuer || options.validators?.length)) {
    throw new AtlsError('DIAL_FAILED', 'insecure dial cannot attest or verify: drop issuer/validators or insecure');
  }
  let lastError: AtlsError | undefined;
  const credentials = options.insecure
    ? grpc.credentials.createInsecure()
    : atlsChannelCredentials({ issuer: options.issuer, validators: options.validators, onConnectionError: (e) => (lastError = e) });
  const client = new Client(target, credentials, {
    'grpc.initial_reconnect_backoff_ms': options.initialBackoffMs ?? 1000,
    'grpc.max_reconnect_backoff_ms': options.maxBackoffMs ?? 10_000,
    ...options.channelOptions,
  });
  const timeoutMs = options.timeoutMs ?? 30_000;
  let onAbort = () => undefined as void;
  try {
    options.signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      // waitForReady does not return when the client is closed underneath it, so abort rejects itself.
      onAbort = () => reject(options.signal?.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve()));
    });
    return client;
  } catch (err) {
    client.close();
    if (options.signal?.aborted) throw new AtlsError('DIAL_FAILED', `dialing ${target}: aborted`, { cause: options.signal.reason });
    const last = lastError ? `; last attempt: ${lastError.reason}` : '';
    throw new AtlsError('DIAL_FAILED', `dialing ${target}: no ${options.insecure ? 'plaintext' : 'aTLS'} connection within ${timeoutMs} ms${last}`, {
      cause: lastError ?? err,
      details: lastError ? { lastCode: lastError.code } : {},
    });
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}
