/**
 * What the flows read about this host. Shared by the InitServer (principals, logs on failure) and
 * the JoinClient (principals), so it lives with the host adapters rather than with either flow.
 */

/** Facts about this host used as SSH principals. */
export interface HostInfo {
  /** Non-loopback interface addresses. */
  addresses(): Promise<string[]>;
  hostname(): Promise<string>;
}

/** The node's recent logs, streamed to the CLI when an init fails (the reference used journalctl). */
export interface LogSource {
  read(): AsyncIterable<Buffer>;
}
