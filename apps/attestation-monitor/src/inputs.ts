/**
 * The monitor's inputs from ConfigMap `join-config` (docs/protocol/continuous-attestation.md):
 * `data.attestationConfig` (the JSON the joinservice enforces), `data.attestationMode`
 * (`enforce`, the default, or `warn`) and, to derive the cluster ID, `binaryData.measurementSalt`.
 * Read through the API every round, so a new config applies to the next round.
 */
import type * as k8s from '@kubernetes/client-node';
import { MEASUREMENT_SECRET_KEY_ID, deriveClusterId } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import { fromApiError } from '@asterism/k8s';
import type { EnforcementMode, MonitorInputs } from '@asterism/node-attestation';

/** The ConfigMap the CLI writes at init (docs/protocol/helm.md). */
export const JOIN_CONFIG = 'join-config';
/** The key of the enforcement mode in join-config. */
export const MODE_KEY = 'attestationMode';

/** The monitor's inputs are missing or malformed. */
export class MonitorInputError extends AsterismError<'JOIN_CONFIG_MISSING' | 'MODE_INVALID' | 'SALT_MISSING'> {}

/** Parses the mode value; absent = enforce. */
export function parseMode(value: string | undefined): EnforcementMode {
  if (value === undefined || value === '' || value === 'enforce') return 'enforce';
  if (value === 'warn') return 'warn';
  throw new MonitorInputError('MODE_INVALID', `${JOIN_CONFIG} ${MODE_KEY} is "${value}": want enforce or warn`);
}

/** Reads join-config through the API. */
export class JoinConfigInputs implements MonitorInputs {
  constructor(
    private readonly core: k8s.CoreV1Api,
    private readonly namespace: string,
  ) {}

  async #configMap(): Promise<k8s.V1ConfigMap> {
    try {
      return await this.core.readNamespacedConfigMap({ namespace: this.namespace, name: JOIN_CONFIG });
    } catch (err) {
      throw fromApiError(err, `reading ConfigMap ${this.namespace}/${JOIN_CONFIG}`);
    }
  }

  async read(): Promise<{ configJson: string; mode: EnforcementMode }> {
    const cm = await this.#configMap();
    const configJson = cm.data?.attestationConfig;
    if (!configJson) throw new MonitorInputError('JOIN_CONFIG_MISSING', `ConfigMap ${this.namespace}/${JOIN_CONFIG} has no attestationConfig`);
    return { configJson, mode: parseMode(cm.data?.[MODE_KEY]) };
  }

  /** The measurement salt (raw bytes). */
  async measurementSalt(): Promise<Buffer> {
    const salt = (await this.#configMap()).binaryData?.measurementSalt;
    if (!salt) throw new MonitorInputError('SALT_MISSING', `ConfigMap ${this.namespace}/${JOIN_CONFIG} has no measurementSalt`);
    return Buffer.from(salt, 'base64');
  }
}

/** The keyservice's GetDataKey, as the joinservice uses it. */
export interface DataKeySource {
  getDataKey(id: string, length: number): Promise<Buffer>;
}

/**
 * The cluster ID as every node derives it: HKDF(measurement secret, measurement salt)
 * (docs/protocol/key-hierarchy.md). The secret is dropped at once; only the public ID is kept.
 */
export async function deriveClusterIdFrom(keys: DataKeySource, inputs: Pick<JoinConfigInputs, 'measurementSalt'>): Promise<Buffer> {
  const [secret, salt] = await Promise.all([keys.getDataKey(MEASUREMENT_SECRET_KEY_ID, 32), inputs.measurementSalt()]);
  try {
    return deriveClusterId(secret, salt);
  } finally {
    secret.fill(0);
  }
}
