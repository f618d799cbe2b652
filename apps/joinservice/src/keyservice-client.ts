import * as grpc from '@grpc/grpc-js';
import { setJoinId } from '@asterism/logger';
import { kms } from '@asterism/proto';
import { fromStatus } from '@asterism/service-runtime';
import type { DataKeySource } from './ticket/ports.js';

/** The keyservice's reasons (status metadata, docs/adr/0027). */
export const KEYSERVICE_REASONS = ['INVALID_REQUEST'] as const;

/**
 * Plaintext gRPC client of the keyservice (cluster-internal, docs/protocol/join-ticket.md). One long-lived
 * channel instead of the reference's connection per call; calls wait for the keyservice to be
 * reachable (waitForReady) up to `timeoutMs`, so a keyservice restart delays joins instead of
 * failing them. A failed call rejects with the RpcError `fromStatus` restores from its status.
 */
export class KeyServiceClient implements DataKeySource {
  readonly #client: kms.APIClient;

  constructor(
    endpoint: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.#client = new kms.APIClient(endpoint, grpc.credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2000,
    });
  }

  /** Derives data key `id` (the keyservice prefixes `key-`); `joinId` reaches the keyservice's log lines. */
  getDataKey(id: string, length: number, signal?: AbortSignal, joinId?: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const md = setJoinId(new grpc.Metadata({ waitForReady: true }), joinId);
      const call = this.#client.getDataKey(
        { dataKeyId: id, length },
        md,
        { deadline: Date.now() + this.timeoutMs },
        (err, res) => {
          signal?.removeEventListener('abort', onAbort);
          if (!err) return resolve(res.dataKey);
          // Decoded once here; what it means for a join is decided once, in the ticket issuer.
          reject(fromStatus(err, KEYSERVICE_REASONS));
        },
      );
      const onAbort = () => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    this.#client.close();
  }
}
