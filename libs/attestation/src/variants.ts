/**
 * Every validator built into this library, in one table (docs/protocol/attestation-variants.md).
 * The TDX variants are not here: they need the process's DCAP collateral source and are
 * registered at start-up with it (registerQemuTdxValidator, registerAzureTdxValidator).
 */
import { awsNitroTpmValidatorFactory } from './aws/nitro-tpm.js';
import { azureTrustedLaunchValidatorFactory } from './azure/trustedlaunch.js';
import type { ValidatorConstructor } from './choose.js';
import { DummyValidator } from './dummy.js';
import { gcpSevEsValidatorFactory } from './gcp/sev-es.js';
import { awsSevSnpValidatorFactory } from './snp/aws.js';
import { azureSevSnpValidatorFactory } from './snp/azure.js';
import { gcpSevSnpValidatorFactory } from './snp/gcp.js';
import { qemuVtpmValidatorFactory } from './vtpm/qemu.js';

/** Variant name -> validator constructor, for every variant whose validator needs no start-up wiring. */
export const BUILT_IN_VALIDATORS: ReadonlyArray<readonly [string, ValidatorConstructor]> = [
  ['dummy', () => new DummyValidator()],
  ['qemu-vtpm', qemuVtpmValidatorFactory],
  ['azure-sev-snp', azureSevSnpValidatorFactory],
  ['aws-sev-snp', awsSevSnpValidatorFactory],
  ['gcp-sev-snp', gcpSevSnpValidatorFactory],
  ['azure-trustedlaunch', azureTrustedLaunchValidatorFactory],
  ['aws-nitro-tpm', awsNitroTpmValidatorFactory],
  ['gcp-sev-es', gcpSevEsValidatorFactory],
];
