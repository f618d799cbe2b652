import * as grpc from '@grpc/grpc-js';
import { JOIN_ID_METADATA, joinIdFrom, type Logger } from '@asterism/logger';
import type { join } from '@asterism/proto';
import type { JoinMetrics } from './metrics.js';
import { toStatus, type PeerRateLimiter } from '@asterism/service-runtime';
import { resolvePeer, type AttestationLookup } from './identity/peer-identity.js';
import { JoinError, type JoinErrorCode } from './ticket/errors.js';
import { parseJoinRequest, parseRejoinRequest } from './ticket/request-validation.js';
import type { TicketContext, TicketIssuer } from './ticket/ticket-issuer.js';

/** The joinservice's answer table (INTERNAL causes are logged with the join id, never sent). */
const STATUS_OF: Record<JoinErrorCode, grpc.status> = {
  INVALID_REQUEST: grpc.status.INVALID_ARGUMENT,
  KEYSERVICE_UNAVAILABLE: grpc.status.UNAVAILABLE,
  KUBERNETES_UNAVAILABLE: grpc.status.UNAVAILABLE,
  CONTROL_PLANE_JOIN_IN_PROGRESS: grpc.status.ABORTED,
  INTERNAL: grpc.status.INTERNAL,
  IDENTITY_MISMATCH: grpc.status.PERMISSION_DENIED,
  IDENTITY_BINDING_RACE: grpc.status.ABORTED,
  METADATA_UNAVAILABLE: grpc.status.UNAVAILABLE,
  RATE_LIMITED: grpc.status.RESOURCE_EXHAUSTED,
  QUARANTINED: grpc.status.PERMISSION_DENIED,
};

/**
 * join.API over the ticket issuer: rate limiting, join ids, status mapping, metrics. The one place
 * where a call becomes domain input: the request is parsed (pure, ticket/request-validation.ts)
 * and the peer resolved with its accepted attestation into the {@link TicketContext}, once.
 */
export class JoinServer {
  constructor(
    private readonly issuer: TicketIssuer,
    private readonly logger: Logger,
    private readonly metrics: JoinMetrics,
    private readonly limiter: PeerRateLimiter,
    private readonly variant: () => string,
    /** The aTLS layer's accepted attestation by peer string; none without one (tests). */
    private readonly attestationOf: AttestationLookup = () => undefined,
  ) {}

  /** Handlers for `server.addService(join.APIService, ...)`. */
  handlers(): join.APIServer {
    return {
      issueJoinTicket: (call, callback) => {
        void this.handle('join', call, callback, (ctx) => this.issuer.issueJoinTicket(parseJoinRequest(call.request), ctx));
      },
      issueRejoinTicket: (call, callback) => {
        void this.handle('rejoin', call, callback, (ctx) => this.issuer.issueRejoinTicket(parseRejoinRequest(call.request), ctx));
      },
    };
  }

  private async handle<Req, Res>(
    kind: 'join' | 'rejoin',
    call: grpc.ServerUnaryCall<Req, Res>,
    callback: grpc.sendUnaryData<Res>,
    run: (ctx: TicketContext) => Promise<Res>,
  ): Promise<void> {
    const peer = call.getPeer();
    const joinId = joinIdFrom(call.metadata);
    const variant = this.variant();
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const trailer = new grpc.Metadata();
    trailer.set(JOIN_ID_METADATA, joinId);
    if (!this.limiter.take(peer)) {
      this.metrics.refused.inc({ kind, reason: 'RATE_LIMITED', variant });
      this.logger.warn('ticket refused: rate limit', { joinId, peer, kind });
      callback(toStatus(new JoinError('RATE_LIMITED', 'too many join requests from this peer, retry later'), STATUS_OF, { metadata: trailer }));
      return;
    }
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    try {
      const res = await run({ peer: resolvePeer(peer, this.attestationOf), joinId, signal: abort.signal });
      this.metrics.issued.inc({ kind, variant });
      this.metrics.duration.observe({ kind, outcome: 'issued' }, seconds());
      callback(null, res, trailer);
    } catch (err) {
      const reason = err instanceof JoinError ? err.code : 'INTERNAL';
      this.metrics.refused.inc({ kind, reason, variant });
      this.metrics.duration.observe({ kind, outcome: 'refused' }, seconds());
      const status = toStatus(err, STATUS_OF, { ref: joinId, metadata: trailer });
      const fields = { joinId, peer, kind, code: reason, err };
      if (reason === 'INVALID_REQUEST') this.logger.warn('ticket refused', fields);
      else this.logger.error('ticket failed', fields);
      callback(status);
    }
  }
}
