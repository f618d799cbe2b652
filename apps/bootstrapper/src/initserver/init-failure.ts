import * as grpc from '@grpc/grpc-js';

/** A failed init: the gRPC code of the final status and the client-facing message. */
export class InitFailure extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
    /** Whether the failure happened after the node was locked (it cannot be initialised again). */
    readonly afterLock: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The reference's `init_failure.error` text: Go's rendering of a gRPC status. */
  get wireText(): string {
    return `rpc error: code = ${codeName(this.code)} desc = ${this.message}`;
  }
}

function codeName(code: grpc.status): string {
  return (grpc.status[code] ?? 'Unknown')
    .toLowerCase()
    .split('_')
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
}
