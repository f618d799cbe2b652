/**
 * `aws-sev-snp` (docs/protocol/sev-snp.md §7): go-tpm-tools' RSA AK in the owner hierarchy;
 * the SNP report's REPORT_DATA is SHA-512 of the AK's SubjectPublicKeyInfo, signed by the VLEK
 * the issuer takes from the extended report's certificate table.
 */
import type { TpmClient } from '@asterism/tpm';
import type { ValidatorConstructor } from '../choose.js';
import { certificateToPem } from '../config/certificate.js';
import type { SevSnpConfig } from '../config/types.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { Variant } from '../variant.js';
import { VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { CERT_TABLE_GUID, parseCertTable } from './cert-table.js';
import { checkReportData } from './checks.js';
import { ConfigfsTsmReportSource, type SnpReportSource } from './configfs-tsm.js';
import { encodeSnpInstanceInfo } from './instance-info.js';
import { akDigest, documentAk, documentSnpInfo, snpVerifierFor, type SnpValidatorDependencies } from './validator.js';

/** aws-sev-snp issuer: RSA AK, extended SNP report bound to the AK, VLEK from the certificate table. */
export class AwsSevSnpIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, reports: SnpReportSource = new ConfigfsTsmReportSource(), eventLog?: () => Promise<Buffer>) {
    super({
      variant: Variant.fromString('aws-sev-snp'),
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
      variant: Variant.fromString('aws-sev-snp'),
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
