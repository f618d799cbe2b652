/**
 * The `qemu-vtpm` variant (docs/protocol/vtpm-attestation.md): RSA AK from go-tpm-tools' AKTemplateRSA in the owner
 * hierarchy, no instance info (JSON `null`, so tpmNonce = SHA256(extraData)). The validator
 * trusts the AK in the document unconditionally, as the reference does: QEMU offers no hardware
 * root for the vTPM, so only the quote's internal consistency and the measurements are checked.
 */
import { decodePublic, type TpmClient } from '@asterism/tpm';
import { measurementsOnlyCodec } from '../config/shapes.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import type { Measurement } from '../measurements/measurement.js';
import { VariantId } from '../variant.js';
import type { ValidatorConstructor, VariantDescriptor } from './descriptor.js';
import { VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('qemu-vtpm', '1.3.9900.5.1');

/** qemu-vtpm issuer over a TPM (a swtpm socket in local mode, /dev/tpmrm0 in a VM). */
export class QemuVtpmIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, eventLog?: () => Promise<Buffer>) {
    super({ variant: VARIANT, openTpm, akKind: 'rsa', akHierarchy: 'owner', ...(eventLog ? { eventLog } : {}) });
  }
}

/** qemu-vtpm validator: AK from `ak_pub`, no CVM checks, measurements from the config. */
export class QemuVtpmValidator extends VtpmValidator {
  constructor(measurements: ReadonlyMap<number, Measurement>, logger: AttestationLogger = NOP_ATTESTATION_LOGGER) {
    super({
      variant: VARIANT,
      measurements,
      logger,
      getTrustedKey: async (doc) => {
        try {
          return decodePublic(doc.attestation?.akPub ?? Buffer.alloc(0));
        } catch (err) {
          throw new AttestationError('AK_UNTRUSTED', `validating attestation public key: decoding ak_pub: ${(err as Error).message}`, { cause: err });
        }
      },
    });
  }
}

/** Builds the qemu-vtpm validator from its config (registered in ../variants.ts). */
export const qemuVtpmValidatorFactory: ValidatorConstructor = (config, logger) => new QemuVtpmValidator(config.measurements, logger);

/** `qemu-vtpm`: QEMU's (or OpenStack's) vTPM, trusted as the reference trusts it. */
export const qemuVtpmVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'QEMU',
  offeredBy: { QEMU: 0, OpenStack: 0 },
  platform: 'tpm',
  config: measurementsOnlyCodec(VARIANT.name),
  defaultMeasurements: vtpmDefaults,
  issuer: (env) => new QemuVtpmIssuer(env.openTpm),
  validator: qemuVtpmValidatorFactory,
  sources: [],
};
