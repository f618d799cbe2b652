import * as grpc from '@grpc/grpc-js';
import { ATLS_CLIENT_CHANNEL_OPTIONS } from '@asterism/atls';
import { init } from '@asterism/proto';
import type { InitConnector } from './init-command.js';

/**
 * Calls init.API/Init with the given channel credentials (aTLS with the CLI's validator in
 * production). A new client per attempt, so every retry gets a fresh connection and nonce.
 */
export class GrpcInitConnector implements InitConnector {
  constructor(private readonly credentials: grpc.ChannelCredentials) {}

  async *init(endpoint: string, req: init.InitRequest, signal?: AbortSignal): AsyncIterable<init.InitResponse> {
    const client = new init.APIClient(endpoint, this.credentials, ATLS_CLIENT_CHANNEL_OPTIONS);
    const call = client.init(req);
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const msg of call as AsyncIterable<init.InitResponse>) yield msg;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      client.close();
    }
  }
}
