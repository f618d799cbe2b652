/**
 * Admission checks of the ticket pipeline (docs/adr/0008): after the request was parsed and the
 * peer resolved, before any key, token, certificate or Kubernetes object exists. Each check sees
 * the parsed request and the resolved peer (IP, accepted attestation) and refuses with a
 * JoinError; the issuer runs them in order, each under the outbound deadline.
 *
 * A new check that decides by disk UUID or attestation key (e.g. a deny list) implements this
 * interface and is added to the list in service.ts (`JoinServiceOptions.admission`).
 */
import type { ResolvedPeer } from '../identity/peer-identity.js';
import type { JoinRequest, RejoinRequest } from './request-validation.js';

/** One admission check of join and rejoin tickets. */
export interface TicketCheck {
  /** What the check is, for the error context (`checking <name>: ...`) and logs. */
  readonly name: string;
  /** Refuses a join ticket (throws a JoinError) or returns. */
  checkJoin(req: JoinRequest, peer: ResolvedPeer, signal: AbortSignal): Promise<void>;
  /** Refuses a rejoin ticket (throws a JoinError) or returns. */
  checkRejoin(req: RejoinRequest, peer: ResolvedPeer, signal: AbortSignal): Promise<void>;
}
