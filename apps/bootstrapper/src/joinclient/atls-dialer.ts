import * as grpc from '@grpc/grpc-js';
import type { Issuer } from '@asterism/attestation';
import { atlsChannelCredentials, ATLS_CLIENT_CHANNEL_OPTIONS } from '@asterism/atls';
import { setJoinId } from '@asterism/logger';
import { join } from '@asterism/proto';
import { fromStatus } from '@asterism/service-runtime';
import type { JoinServiceDialer } from './ports.js';

/** The joinservice's reasons (status metadata, docs/protocol/grpc-apis.md) a joining node logs and acts on. */
export const JOIN_REASONS = [
  'INVALID_REQUEST',
  'KEYSERVICE_UNAVAILABLE',
  'KUBERNETES_UNAVAILABLE',
  'CONTROL_PLANE_JOIN_IN_PROGRESS',
  'IDENTITY_MISMATCH',
  'IDENTITY_BINDING_RACE',
  'METADATA_UNAVAILABLE',
  'RATE_LIMITED',
] as const;

/**
 * join.API over aTLS as a joining node uses it (docs/protocol/bootstrapper.md): the node attests itself with its
 * issuer (exporter-bound evidence, docs/adr/0004) and does not verify the joinservice. One channel
 * per call: every attempt is a fresh connection with a fresh nonce. A failed call rejects with the
 * RpcError `fromStatus` restores (reason code from the status metadata, docs/adr/0027).
 */
export class AtlsJoinServiceDialer implements JoinServiceDialer {
  readonly #credentials: grpc.ChannelCredentials;

  /** `localAddress`: connect from this IP (the joinservice identifies nodes by source IP, docs/adr/0008). */
  constructor(issuer: Issuer, options: { localAddress?: string } = {}) {
    this.#credentials = atlsChannelCredentials({ issuer, ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
  }

  issueJoinTicket(endpoint: string, req: join.IssueJoinTicketRequest, options: { joinId: string; signal?: AbortSignal }): Promise<join.IssueJoinTicketResponse> {
    return this.call(endpoint, options, (client, md, cb) => client.issueJoinTicket(req, md, cb));
  }

  issueRejoinTicket(endpoint: string, req: join.IssueRejoinTicketRequest, options: { joinId: string; signal?: AbortSignal }): Promise<join.IssueRejoinTicketResponse> {
    return this.call(endpoint, options, (client, md, cb) => client.issueRejoinTicket(req, md, cb));
  }

  private call<Res>(
    endpoint: string,
    options: { joinId: string; signal?: AbortSignal },
    invoke: (client: join.APIClient, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: Res) => void) => grpc.ClientUnaryCall,
  ): Promise<Res> {
    const client = new join.APIClient(endpoint, this.#credentials, ATLS_CLIENT_CHANNEL_OPTIONS);
    return new Promise<Res>((resolve, reject) => {
      const md = setJoinId(new grpc.Metadata(), options.joinId);
      const call = invoke(client, md, (err, res) => {
        options.signal?.removeEventListener('abort', onAbort);
        client.close();
        if (err) reject(fromStatus(err, JOIN_REASONS));
        else resolve(res!);
      });
      const onAbort = () => call.cancel();
      if (options.signal?.aborted) call.cancel();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
