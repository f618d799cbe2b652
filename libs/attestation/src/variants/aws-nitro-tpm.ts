/**
 * The `aws-nitro-tpm` variant (docs/protocol/cloud-vtpm-variants.md §3): an RSA AK from the
 * go-tpm-tools template (owner hierarchy), the EC2 instance identity document as instance info.
 * The validator trusts `ak_pub` as the reference does (Nitro offers no AK certificate) and
 * requires the document's AMI to declare `TpmSupport` `v2.0` (EC2 DescribeImages in the
 * document's region), through a consumer-declared port.
 */
import type { TpmClient } from '@asterism/tpm';
import { documentAkPublic } from '../cloud/keys.js';
import type { VariantDescriptor, ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { measurementsOnlyCodec } from '../config/shapes.js';
import type { ImageTpmSupportLookup } from '../aws/image-lookup.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import type { Measurement } from '../measurements/measurement.js';
import { VariantId } from '../variant.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';
import { VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { encodeIdentityDocument, ImdsIdentitySource, parseIdentityDocument, type InstanceIdentitySource } from '../aws/identity-document.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('aws-nitro-tpm', '1.3.9900.2.1');

/** The TpmSupport value of an AMI that boots with a TPM 2.0. */
export const TPM_SUPPORT_V2 = 'v2.0';

export type { ImageTpmSupportLookup } from '../aws/image-lookup.js';

/** aws-nitro-tpm issuer. */
export class AwsNitroTpmIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, identity: InstanceIdentitySource = new ImdsIdentitySource(), eventLog?: () => Promise<Buffer>) {
    super({
      variant: VARIANT,
      openTpm,
      akKind: 'rsa',
      akHierarchy: 'owner',
      ...(eventLog ? { eventLog } : {}),
      instanceInfo: async (_tpm, _extraData, signal) => encodeIdentityDocument(await identity.identityDocument(signal)),
    });
  }
}

/** The AMI named by the document must support TPM 2.0 (validateCVM). */
export async function checkNitroImage(doc: VtpmAttestationDocument, images: ImageTpmSupportLookup, signal?: AbortSignal): Promise<void> {
  if (!doc.instanceInfo || doc.instanceInfo.length === 0) throw new AttestationError('DOCUMENT_MALFORMED', 'aws-nitro-tpm document has no instance identity document', { details: { field: 'InstanceInfo' } });
  const identity = parseIdentityDocument(doc.instanceInfo);
  const { region, imageId } = identity;
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) throw new AttestationError('DOCUMENT_MALFORMED', `instance identity document: region ${JSON.stringify(region)} is not an AWS region`, { details: { field: 'region' } });
  if (!/^ami-[0-9a-f]{8,17}$/.test(imageId)) throw new AttestationError('DOCUMENT_MALFORMED', `instance identity document: imageId ${JSON.stringify(imageId)} is not an AMI id`, { details: { field: 'imageId' } });
  let support: string | undefined;
  try {
    support = await images.tpmSupport(region, imageId, signal);
  } catch (err) {
    if (err instanceof AttestationError) throw err;
    throw new AttestationError('CLOUD_API_FAILED', `EC2 DescribeImages for ${imageId} in ${region}: ${(err as Error).message}`, { cause: err, details: { api: 'DescribeImages', region, imageId } });
  }
  if (support !== TPM_SUPPORT_V2) {
    throw new AttestationError('TPM_SUPPORT_MISSING', `AMI ${imageId} does not support TPM v2.0 (TpmSupport ${JSON.stringify(support ?? null)})`, {
      details: { imageId, region, tpmSupport: support ?? null, expected: TPM_SUPPORT_V2 },
    });
  }
}

/** Options of {@link AwsNitroTpmValidator}. */
export interface AwsNitroTpmValidatorOptions {
  readonly measurements: ReadonlyMap<number, Measurement>;
  readonly images: ImageTpmSupportLookup;
  readonly logger?: AttestationLogger;
}

/** aws-nitro-tpm validator: AK from `ak_pub`, the AMI TpmSupport check, measurements. */
export class AwsNitroTpmValidator extends VtpmValidator {
  constructor(options: AwsNitroTpmValidatorOptions) {
    super({
      variant: VARIANT,
      measurements: options.measurements,
      logger: options.logger ?? NOP_ATTESTATION_LOGGER,
      getTrustedKey: async (doc) => documentAkPublic(doc),
      validateCvm: (doc, signal) => checkNitroImage(doc, options.images, signal),
    });
  }
}

/** Stands in when the process has no EC2 client: every validation is refused with CLOUD_API_FAILED. */
export const NO_EC2_IMAGE_LOOKUP: ImageTpmSupportLookup = {
  tpmSupport: () => Promise.reject(new Error('no EC2 DescribeImages client is configured in this process')),
};

/** Builds the aws-nitro-tpm validator from its config (the descriptor's validator). */
export const awsNitroTpmValidatorFactory: ValidatorConstructor = (config, logger, deps) => new AwsNitroTpmValidator({ measurements: config.measurements, logger, images: deps.awsNitroTpm?.images ?? NO_EC2_IMAGE_LOOKUP });

/** `aws-nitro-tpm`: the Nitro vTPM, the AMI's TpmSupport checked through EC2 (`ec2-images`). */
export const awsNitroTpmVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'AWS',
  offeredBy: { AWS: 1 },
  platform: 'tpm',
  config: measurementsOnlyCodec(VARIANT.name),
  defaultMeasurements: vtpmDefaults,
  imageMeasurementOverrides: [[0, '737f767a12f54e70eecbc8684011323ae2fe2dd9f90785577969d7a2013e8c12']],
  issuer: (env) => new AwsNitroTpmIssuer(env.openTpm, undefined, env.eventLog),
  validator: awsNitroTpmValidatorFactory,
  sources: ['ec2-images'],
};
