import type { Logger } from '@asterism/logger';

/** Turns a failed stage's error into the orchestrator's error; default: `Error("<step>: <message>")`. */
export type StageFailure = (step: string, err: unknown) => Error;

const contextError: StageFailure = (step, err) => new Error(`${step}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });

/**
 * The one step timer of the bootstrapper's orchestrators (InitFlow, JoinClient, main, kubeadm
 * backend): runs one named stage and logs `{step, durationMs}` when it finishes, or
 * `{step, durationMs, err}` when it fails and rethrows through `failure` (the stage's name as context).
 */
export async function timedStage<T>(logger: Logger, event: string, step: string, fn: () => Promise<T>, failure: StageFailure = contextError): Promise<T> {
  const started = performance.now();
  try {
    const out = await fn();
    logger.info(event, { step, durationMs: Math.round(performance.now() - started) });
    return out;
  } catch (err) {
    logger.warn(`${event} failed`, { step, durationMs: Math.round(performance.now() - started), err });
    throw failure(step, err);
  }
}
