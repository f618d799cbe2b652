/**
 * `gcp-sev-snp` (docs/protocol/sev-snp.md §7): the GCE attestation key (template and certificate
 * from TPM NV), REPORT_DATA = extraData zero-padded, VCEK (and maybe ASK) from the extended
 * report's certificate table or, when the host attaches none, from KDS on the validator side.
 * The AK is trusted because GCE's shielded-identity source names it for the instance.
 */
import { decodePublic, publicKeyObject, TPM_ALG, TpmResponseError, type TpmClient } from '@asterism/tpm';
import { certificateToPem } from '../config/certificate.js';
import { sevSnpCodec } from '../config/shapes.js';
import type { SevSnpConfig } from '../config/types.js';
import { GCE_METADATA_BASE_URL } from '../gcp/gce-identity.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import type { VariantDescriptor, ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { VariantId } from '../variant.js';
import { type LoadedAttestationKey, VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { CERT_TABLE_GUID, parseCertTable } from '../snp/cert-table.js';
import { checkReportData } from '../snp/checks.js';
import { ConfigfsTsmReportSource, nodeSnpReportSource, type SnpReportSource } from '../snp/configfs-tsm.js';
import { GceMetadataClient, type GceInstanceInfoSource } from '../snp/gce.js';
import { encodeSnpInstanceInfo } from '../snp/instance-info.js';
import { documentAk, documentSnpInfo, paddedReportData, snpVerifierFor, type SnpValidatorDependencies } from '../snp/validator.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('gcp-sev-snp', '1.3.9900.3.2');

/** NV indices of the GCE RSA attestation key template and certificate. */
export const GCE_AK_TEMPLATE_NV_INDEX_RSA = 0x01c10001;
export const GCE_AK_CERT_NV_INDEX_RSA = 0x01c10000;

/** Creates the GCE AK from the template in NV (endorsement hierarchy), with its certificate if present. */
export async function loadGceAttestationKey(tpm: TpmClient): Promise<LoadedAttestationKey> {
  const template = decodePublic(await tpm.nvRead(GCE_AK_TEMPLATE_NV_INDEX_RSA));
  const key = await tpm.createPrimary('endorsement', template);
  let cert: Buffer | undefined;
  try {
    cert = await tpm.nvRead(GCE_AK_CERT_NV_INDEX_RSA);
  } catch (err) {
    if (!(err instanceof TpmResponseError)) throw err;
  }
  return { handle: key.handle, publicBytes: key.publicBytes, public: key.public, transient: true, ...(cert ? { cert } : {}) };
}

/** gcp-sev-snp issuer. */
export class GcpSevSnpIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, reports: SnpReportSource = new ConfigfsTsmReportSource(), metadata: GceInstanceInfoSource = new GceMetadataClient(), eventLog?: () => Promise<Buffer>) {
    super({
      variant: VARIANT,
      openTpm,
      akKind: 'rsa',
      loadAttestationKey: loadGceAttestationKey,
      ...(eventLog ? { eventLog } : {}),
      instanceInfo: async (_tpm, extraData, signal) => {
        const { report, certTable } = await reports.extendedReport(paddedReportData(extraData), 0, signal);
        const certs = parseCertTable(certTable);
        const vcek = certs.get(CERT_TABLE_GUID.vcek);
        const ask = certs.get(CERT_TABLE_GUID.ask);
        const gcp = await metadata.instanceInfo(signal);
        return encodeSnpInstanceInfo({
          reportSigner: vcek ? Buffer.from(certificateToPem(vcek)) : Buffer.alloc(0),
          certChain: ask ? Buffer.from(certificateToPem(ask)) : Buffer.alloc(0),
          attestationReport: report,
          azure: null,
          gcp,
        });
      },
    });
  }
}

/** gcp-sev-snp validator: SNP report bound to extraData, AK == the instance's GCE signing key. */
export class GcpSevSnpValidator extends VtpmValidator {
  constructor(config: SevSnpConfig, logger: AttestationLogger = NOP_ATTESTATION_LOGGER, deps: SnpValidatorDependencies = {}) {
    const verifier = snpVerifierFor(config, deps, logger, { minimumTcb: false });
    super({
      variant: VARIANT,
      measurements: config.measurements,
      logger,
      getTrustedKey: async (doc, extraData, signal) => {
        const info = documentSnpInfo(doc);
        await verifier.verify({ report: info.attestationReport, reportSigner: info.reportSigner, certChain: info.certChain }, (r) => checkReportData(r, paddedReportData(extraData), 'extraData'), signal);
        if (!info.gcp) throw new AttestationError('DOCUMENT_MALFORMED', 'SNP instance info has no GCP section', { details: { field: 'InstanceInfo.GCP' } });
        if (!deps.gceIdentity) throw new AttestationError('AK_UNTRUSTED', 'no GCE shielded-identity source is configured, the attestation key cannot be trusted', { details: { variant: 'gcp-sev-snp' } });
        const trusted = await deps.gceIdentity.signingKey(info.gcp, signal);
        const ak = documentAk(doc);
        const same = ak.type === TPM_ALG.RSA && trusted.equals(publicKeyObject(ak));
        if (!same) {
          throw new AttestationError('AK_MISMATCH', `the document's attestation key is not the GCE signing key of ${info.gcp.projectId}/${info.gcp.zone}/${info.gcp.instanceName}`, {
            details: { field: 'ak_pub', instance: info.gcp.instanceName },
          });
        }
        return ak;
      },
    });
  }
}

/** Builds the gcp-sev-snp validator from its config (registered in ../variants.ts). */
export const gcpSevSnpValidatorFactory: ValidatorConstructor = (config, logger, deps) => new GcpSevSnpValidator(config as SevSnpConfig, logger, deps.snp);

/** `gcp-sev-snp`: SEV-SNP on GCE, the AK vouched for by the Compute API (`gce-shielded-identity`), AMD KDS collateral (`amd-kds`). */
export const gcpSevSnpVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'GCP',
  offeredBy: { GCP: 0 },
  platform: 'tpm',
  config: sevSnpCodec('gcp-sev-snp'),
  defaultMeasurements: vtpmDefaults,
  issuer: (env) => new GcpSevSnpIssuer(env.openTpm, nodeSnpReportSource(env.stateRoot, env.tsmFs), new GceMetadataClient(env.metadataUrl ?? GCE_METADATA_BASE_URL)),
  validator: gcpSevSnpValidatorFactory,
  sources: ['amd-kds', 'gce-shielded-identity'],
};
