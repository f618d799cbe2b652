import type { Logger } from '@asterism/logger';

/**
 * Runs `shutdown` once on SIGTERM or SIGINT, then exits with code 0 (or 1 if shutdown threw).
 * A second signal while shutting down exits immediately with 130.
 */
export function handleShutdownSignals(logger: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn('second signal during shutdown, exiting now', { signal });
      process.exit(130);
    }
    stopping = true;
    logger.info('shutting down', { signal });
    shutdown().then(
      () => {
        logger.info('shutdown complete');
        // Let winston flush its stream before exiting.
        setImmediate(() => process.exit(0));
      },
      (err: unknown) => {
        logger.error('shutdown failed', { err });
        setImmediate(() => process.exit(1));
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
