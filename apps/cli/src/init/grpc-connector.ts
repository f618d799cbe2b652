import type * as grpc from '@grpc/grpc-js';
import { ATLS_CLIENT_CHANNEL_OPTIONS, type AtlsError } from '@asterism/atls';
import { init } from '@asterism/proto';
import { fromStatus } from '@asterism/service-runtime';
import { INIT_REASONS, type InitConnector } from './init-command.js';

/** Channel credentials for one attempt; `onConnectionError` hears why an aTLS connection failed. */
export type InitCredentials = (onConnectionError: (err: AtlsError) => void) => grpc.ChannelCredentials;

/**
 * Calls init.API/Init with fresh channel credentials per attempt (aTLS with the CLI's validator in
 * production), so every retry gets a fresh connection and nonce. A call that failed because the
 * aTLS connection failed throws that typed AtlsError; any other failure throws the RpcError that
 * `fromStatus` restores from the status (docs/adr/0027), never a text to match.
 */
export class GrpcInitConnector implements InitConnector {
  constructor(private readonly credentials: InitCredentials) {}

  async *init(endpoint: string, req: init.InitRequest, signal?: AbortSignal): AsyncIterable<init.InitResponse> {
    let connectionError: AtlsError | undefined;
    const client = new init.APIClient(
      endpoint,
      this.credentials((err) => (connectionError = err)),
      ATLS_CLIENT_CHANNEL_OPTIONS,
    );
    const call = client.init(req);
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    let received = false;
    try {
      for await (const msg of call as AsyncIterable<init.InitResponse>) {
        received = true;
        yield msg;
      }
    } catch (err) {
      // Before any answer, a recorded aTLS failure is why the call failed (grpc-js says UNAVAILABLE).
      if (!received && connectionError) throw connectionError;
      throw fromStatus(err, INIT_REASONS);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      client.close();
    }
  }
}
