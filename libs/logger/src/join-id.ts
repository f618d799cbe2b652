import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';

/**
 * gRPC metadata key of the join id: the JoinClient sends one per ticket request, the joinservice
 * answers it in the trailer and forwards it to the keyservice, and every server's log lines of that
 * join carry it as `joinId`, so one join can be followed across the three processes.
 */
export const JOIN_ID_METADATA = 'x-join-id';

/** Shape of a join id we accept from a peer (it ends up in log lines and status texts). */
const SANE_JOIN_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The peer's join id, when it sent a sane one. */
export function readJoinId(metadata: grpc.Metadata): string | undefined {
  const v = metadata.get(JOIN_ID_METADATA)[0];
  return typeof v === 'string' && SANE_JOIN_ID.test(v) ? v : undefined;
}

/** The peer's join id, or a fresh UUID when it sent none (or an unusable one). */
export function joinIdFrom(metadata: grpc.Metadata): string {
  return readJoinId(metadata) ?? randomUUID();
}

/** Adds the join id to outgoing metadata (no-op without one). */
export function setJoinId(metadata: grpc.Metadata, joinId: string | undefined): grpc.Metadata {
  if (joinId) metadata.set(JOIN_ID_METADATA, joinId);
  return metadata;
}
