/** A mistake in the command line: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {}

/** Exit codes shared by the commands. */
export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;

/** `host[:port]` with `port` added when missing (IPv6 literals get brackets). */
export function withPort(hostPort: string, port: number): string {
  if (/^\[.*\]:\d+$/.test(hostPort) || /^[^:]+:\d+$/.test(hostPort)) return hostPort;
  return hostPort.includes(':') ? `[${hostPort}]:${port}` : `${hostPort}:${port}`;
}

/** Whole seconds from a flag, or the fallback. */
export function seconds(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`invalid --timeout "${raw}": want whole seconds`);
  return Number(raw);
}
