import { encodeAttestationConfig, unmarshalAttestationConfig, validatorFromConfigJson, type Validator, type ValidatorDependencies, type Variant } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import { runningNodeConfig } from './judge.js';
import type { NodeView } from './node-status.js';

/**
 * The running-node validator of a config JSON, decoded exactly as the joinservice decodes it, with
 * the outside sources (collateral caches, cloud APIs) the variant needs, built once by the caller.
 */
export function runningNodeValidator(variant: Variant, logger: Logger, deps: ValidatorDependencies = {}) {
  return (configJson: string): Validator => validatorFromConfigJson(encodeAttestationConfig(runningNodeConfig(unmarshalAttestationConfig(configJson, variant))), variant, logger, deps);
}

/** `host:port` of a node's verification service: its InternalIP and the NodePort. */
export function endpointOf(port: number) {
  return (node: NodeView): string | undefined => (node.internalIp ? (node.internalIp.includes(':') ? `[${node.internalIp}]:${port}` : `${node.internalIp}:${port}`) : undefined);
}
