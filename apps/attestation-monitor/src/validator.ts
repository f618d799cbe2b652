/**
 * The monitor's validator factory: the variant's outside sources (collateral caches, cloud APIs),
 * built once at start as the joinservice builds them (libs/validator-sources), and a running-node
 * validator per attestation config that uses them (docs/protocol/continuous-attestation.md).
 */
import type { Validator } from '@asterism/attestation';
import type { KubeClients } from '@asterism/k8s';
import type { Logger } from '@asterism/logger';
import { runningNodeValidator } from '@asterism/node-attestation';
import { validatorDependencies, type CollateralCounts, type ValidatorSourceConfig } from '@asterism/validator-sources';

/** What {@link monitorValidatorFactory} needs. */
export interface MonitorSourceWiring {
  readonly sources: ValidatorSourceConfig;
  readonly clients: KubeClients;
  readonly logger: Logger;
  readonly collateralCounts: CollateralCounts;
}

/**
 * Builds the variant's sources (a failing source names its step) and returns the monitor's
 * `buildValidator`: attestation config JSON -> running-node validator.
 */
export async function monitorValidatorFactory(w: MonitorSourceWiring): Promise<(configJson: string) => Validator> {
  const step = async <T>(what: string, fn: () => Promise<T> | T): Promise<T> => {
    w.logger.info(what);
    try {
      return await fn();
    } catch (err) {
      throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  };
  const deps = await validatorDependencies({ cfg: w.sources, logger: w.logger, clients: w.clients, collateralCounts: w.collateralCounts, step });
  return runningNodeValidator(w.sources.variant, w.logger, deps);
}
