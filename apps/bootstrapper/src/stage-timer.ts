import type { Logger } from '@asterism/logger';

/**
 * Runs one named stage of an orchestrator and logs `{step, durationMs}` when it finishes, or
 * `{step, durationMs, err}` and rethrows with the stage's name as context when it fails.
 */
export async function timedStage<T>(logger: Logger, event: string, step: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const out = await fn();
    logger.info(event, { step, durationMs: Math.round(performance.now() - started) });
    return out;
  } catch (err) {
    logger.warn(`${event} failed`, { step, durationMs: Math.round(performance.now() - started), err });
    throw new Error(`${step}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
