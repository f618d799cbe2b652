/**
 * The `gcp-sev-es` variant (docs/protocol/cloud-vtpm-variants.md §4): the issuer creates the GCE
 * attestation key from the template Google stores in NV 0x01C10001 (endorsement hierarchy; its
 * certificate from NV 0x01C10000 when present) and sends the instance's names as instance info.
 * The validator trusts only the key the Compute API reports as the instance's vTPM signing key,
 * and requires the measured platform state to say GCE firmware >= 1 with AMD SEV.
 */
import { decodePublic, TpmResponseError, type TpmClient } from '@asterism/tpm';
import { documentAkPublic, pkixPublicKeyFromPem, requireAkIs } from '../cloud/keys.js';
import type { VariantDescriptor, ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { measurementsOnlyCodec } from '../config/shapes.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import type { Measurement } from '../measurements/measurement.js';
import { VariantId } from '../variant.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';
import { VtpmIssuer, type LoadedAttestationKey } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { ComputeShieldedIdentitySource, decodeGceInstanceInfo, encodeGceInstanceInfo, GceMetadataInstanceSource, metadataAccessToken, type GceInstanceSource, type ShieldedIdentitySource } from '../gcp/gce-identity.js';
import { checkGceSevPlatform } from '../gcp/platform-state.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('gcp-sev-es', '1.3.9900.3.1');

/** NV indices of the GCE RSA attestation key: its certificate and its template. */
export const GCE_AK_CERT_NV_INDEX_RSA = 0x01c10000;
export const GCE_AK_TEMPLATE_NV_INDEX_RSA = 0x01c10001;

/** Loads the GCE RSA AK: template from NV, transient primary in the endorsement hierarchy, certificate if present. */
export async function loadGceAttestationKey(tpm: TpmClient): Promise<LoadedAttestationKey> {
  const template = decodePublic(await tpm.nvRead(GCE_AK_TEMPLATE_NV_INDEX_RSA));
  const created = await tpm.createPrimary('endorsement', template);
  let cert: Buffer | undefined;
  try {
    cert = await tpm.nvRead(GCE_AK_CERT_NV_INDEX_RSA);
  } catch (err) {
    // No certificate index: the AK is still usable (the validator asks the Compute API).
    if (!(err instanceof TpmResponseError)) {
      await tpm.flushContext(created.handle).catch(() => undefined);
      throw err;
    }
  }
  return { ...created, ...(cert ? { cert } : {}), transient: true };
}

/** gcp-sev-es issuer. */
export class GcpSevEsIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, instance: GceInstanceSource = new GceMetadataInstanceSource(), eventLog?: () => Promise<Buffer>) {
    super({
      variant: VARIANT,
      openTpm,
      akKind: 'rsa',
      loadAttestationKey: loadGceAttestationKey,
      ...(eventLog ? { eventLog } : {}),
      instanceInfo: async (_tpm, _extraData, signal) => encodeGceInstanceInfo(await instance.instanceInfo(signal)),
    });
  }
}

/** The AK of a gcp-sev-es document: the instance's shielded-identity signing key, which `ak_pub` must be. */
export async function gceTrustedKey(doc: VtpmAttestationDocument, identity: ShieldedIdentitySource, signal?: AbortSignal) {
  const instance = decodeGceInstanceInfo(doc.instanceInfo);
  let pem: string;
  try {
    pem = await identity.signingKeyPem(instance, signal);
  } catch (err) {
    if (err instanceof AttestationError) throw err;
    throw new AttestationError('CLOUD_API_FAILED', `getShieldedInstanceIdentity for ${instance.projectId}/${instance.zone}/${instance.instanceName}: ${(err as Error).message}`, {
      cause: err,
      details: { api: 'getShieldedInstanceIdentity', ...instance },
    });
  }
  const vouched = pkixPublicKeyFromPem(pem, 'signingKey.ekPub');
  const ak = documentAkPublic(doc);
  requireAkIs(ak, vouched, 'shielded instance identity signing key');
  return ak;
}

/** Options of {@link GcpSevEsValidator}. */
export interface GcpSevEsValidatorOptions {
  readonly measurements: ReadonlyMap<number, Measurement>;
  readonly identity: ShieldedIdentitySource;
  readonly logger?: AttestationLogger;
}

/** gcp-sev-es validator. */
export class GcpSevEsValidator extends VtpmValidator {
  constructor(options: GcpSevEsValidatorOptions) {
    super({
      variant: VARIANT,
      measurements: options.measurements,
      logger: options.logger ?? NOP_ATTESTATION_LOGGER,
      getTrustedKey: (doc, _extraData, signal) => gceTrustedKey(doc, options.identity, signal),
      validateCvm: async (doc) => {
        checkGceSevPlatform(doc.attestation?.eventLog ?? Buffer.alloc(0));
      },
    });
  }
}

let defaultIdentity: ShieldedIdentitySource | undefined;

/** Builds the gcp-sev-es validator from its config (the descriptor's validator). */
export const gcpSevEsValidatorFactory: ValidatorConstructor = (config, logger, deps) => {
  // Default: the Compute API with the node's service-account token from the metadata server (lazy: no I/O here).
  const identity = deps.gcpSevEs?.identity ?? (defaultIdentity ??= new ComputeShieldedIdentitySource(metadataAccessToken()));
  return new GcpSevEsValidator({ measurements: config.measurements, logger, identity });
};

/** `gcp-sev-es`: the GCE vTPM, its key vouched for by the Compute API (`gce-shielded-identity`). */
export const gcpSevEsVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'GCP',
  offeredBy: { GCP: 1 },
  platform: 'tpm',
  config: measurementsOnlyCodec(VARIANT.name),
  defaultMeasurements: vtpmDefaults,
  issuer: (env) => new GcpSevEsIssuer(env.openTpm, undefined, env.eventLog),
  validator: gcpSevEsValidatorFactory,
  sources: ['gce-shielded-identity'],
};
