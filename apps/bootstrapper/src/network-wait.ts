/**
 * The network stage of a boot (docs/protocol/node-image.md "Boot time"): the node image starts the
 * bootstrapper before network-online.target, so Node's start-up and the state disk's format overlap
 * with DHCP. Before its first network call the bootstrapper waits here until the node's metadata
 * source answers.
 */
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import { MetadataError } from '@asterism/metadata';

/** The metadata source did not answer within the wait. */
export class NetworkWaitError extends AsterismError<'NETWORK_UNAVAILABLE'> {}

/** What the wait asks (the consumer's view of the metadata provider). */
export interface SelfLookup {
  self(signal?: AbortSignal): Promise<unknown>;
}

/** How long and how often. */
export interface NetworkWaitOptions {
  /** Give up after this long (default 5 min: a node whose network never comes up reboots). */
  timeoutMs?: number;
  /** Pause between attempts (default 500 ms). */
  intervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Codes that mean "not reachable (yet)"; any other answer means the network works. */
const UNREACHABLE = new Set(['METADATA_UNAVAILABLE', 'METADATA_ENDPOINT_ABSENT']);

/**
 * Resolves with the milliseconds waited once the metadata source answers (any answer but "not
 * reachable": a 404 or a malformed document is the next stage's error, not the network's).
 * Rejects with NETWORK_UNAVAILABLE after the timeout.
 */
export async function waitForMetadata(source: SelfLookup, logger: Logger, o: NetworkWaitOptions = {}): Promise<number> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = now();
  const deadline = started + (o.timeoutMs ?? 300_000);
  let attempts = 0;
  for (;;) {
    attempts++;
    const err = await source.self().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (err === undefined || !(err instanceof MetadataError) || !UNREACHABLE.has(err.code)) {
      const waitedMs = now() - started;
      if (attempts > 1) logger.info('network up: metadata reachable', { waitedMs, attempts });
      return waitedMs;
    }
    if (attempts === 1) logger.info('waiting for the network: metadata not reachable yet', { err: err.message });
    if (now() >= deadline) {
      throw new NetworkWaitError('NETWORK_UNAVAILABLE', `the metadata source did not answer within ${Math.round((deadline - started) / 1000)} s (${attempts} attempts; last: ${err.message})`, { cause: err });
    }
    await sleep(o.intervalMs ?? 500);
  }
}
