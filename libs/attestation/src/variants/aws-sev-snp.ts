/**
 * `aws-sev-snp` (docs/protocol/sev-snp.md §7): go-tpm-tools' RSA AK in the owner hierarchy;
 * the SNP report's REPORT_DATA is SHA-512 of the AK's SubjectPublicKeyInfo, signed by the VLEK
 * the issuer takes from the extended report's certificate table.
 */
import type { TpmClient } from '@asterism/tpm';
import { certificateToPem } from '../config/certificate.js';
import { sevSnpCodec } from '../config/shapes.js';
import type { SevSnpConfig } from '../config/types.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import type { VariantDescriptor, ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { VariantId } from '../variant.js';
import { VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { CERT_TABLE_GUID, parseCertTable } from '../snp/cert-table.js';
import { checkReportData } from '../snp/checks.js';
import { ConfigfsTsmReportSource, nodeSnpReportSource, type SnpReportSource } from '../snp/configfs-tsm.js';
import { encodeSnpInstanceInfo } from '../snp/instance-info.js';
import { akDigest, documentAk, documentSnpInfo, snpVerifierFor, type SnpValidatorDependencies } from '../snp/validator.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('aws-sev-snp', '1.3.9900.2.2');

/** aws-sev-snp issuer: RSA AK, extended SNP report bound to the AK, VLEK from the certificate table. */
export class AwsSevSnpIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, reports: SnpReportSource = new ConfigfsTsmReportSource(), eventLog?: () => Promise<Buffer>) {
    super({
      variant: VARIANT,
      openTpm,
      akKind: 'rsa',
      akHierarchy: 'owner',
      ...(eventLog ? { eventLog } : {}),
      instanceInfo: async (_tpm, _extraData, signal, ak) => {
        const { report, certTable } = await reports.extendedReport(akDigest(ak.public), 0, signal);
        const vlek = parseCertTable(certTable).get(CERT_TABLE_GUID.vlek);
        if (!vlek) throw new AttestationError('ISSUER_FAILED', 'the extended SNP report carries no VLEK certificate', { details: { step: 'getting VLEK' } });
        return encodeSnpInstanceInfo({ reportSigner: Buffer.from(certificateToPem(vlek)), certChain: Buffer.alloc(0), attestationReport: report, azure: null, gcp: null });
      },
    });
  }
}

/** aws-sev-snp validator: VLEK chain to the configured ARK, REPORT_DATA == SHA-512(AK SPKI), minimum launch TCB. */
export class AwsSevSnpValidator extends VtpmValidator {
  constructor(config: SevSnpConfig, logger: AttestationLogger = NOP_ATTESTATION_LOGGER, deps: SnpValidatorDependencies = {}) {
    const verifier = snpVerifierFor(config, deps, logger, { minimumTcb: false });
    super({
      variant: VARIANT,
      measurements: config.measurements,
      logger,
      getTrustedKey: async (doc, _extraData, signal) => {
        const ak = documentAk(doc);
        const info = documentSnpInfo(doc);
        const digest = akDigest(ak);
        await verifier.verify({ report: info.attestationReport, reportSigner: info.reportSigner, certChain: info.certChain }, (r) => checkReportData(r, digest, 'SHA-512 of the attestation key'), signal);
        return ak;
      },
    });
  }
}

/** Builds the aws-sev-snp validator from its config (registered in ../variants.ts). */
export const awsSevSnpValidatorFactory: ValidatorConstructor = (config, logger, deps) => new AwsSevSnpValidator(config as SevSnpConfig, logger, deps.snp);

/** `aws-sev-snp`: SEV-SNP on EC2, VLEK-signed reports through configfs-tsm, AMD KDS collateral (`amd-kds`). */
export const awsSevSnpVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'AWS',
  offeredBy: { AWS: 0 },
  platform: 'tpm',
  config: sevSnpCodec('aws-sev-snp'),
  defaultMeasurements: vtpmDefaults,
  imageMeasurementOverrides: [[0, 'd6df855358f5b10f06f0fab3f408ad26cd165a2949bad69e2cc75692529e662a']],
  issuer: (env) => new AwsSevSnpIssuer(env.openTpm, nodeSnpReportSource(env.stateRoot, env.tsmFs)),
  validator: awsSevSnpValidatorFactory,
  sources: ['amd-kds'],
  amdSigner: 'vlek',
};
