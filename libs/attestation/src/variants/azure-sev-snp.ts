/**
 * `azure-sev-snp` (docs/protocol/sev-snp.md §6-§8): the HCL attestation key persisted at
 * 0x81000003, the HCL report from NV 0x01400001 (SNP report + runtime data whose SHA-256 is in
 * REPORT_DATA and whose first key is the AK), VCEK and chain from THIM, the ID-key digest policy.
 */
import { createHash } from 'node:crypto';
import type { TpmClient } from '@asterism/tpm';
import { decodeFirmwareSignerConfig, DEFAULT_ACCEPTED_KEY_DIGESTS, encodeFirmwareSignerConfig } from '../config/idkeydigest.js';
import { decodeSevSnpBase, defaultSevSnpBase, encodeSevSnp } from '../config/shapes.js';
import type { AzureSevSnpConfig, SnpFirmwareSignerConfig } from '../config/types.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import { goJsonString } from '../measurements/go-json-string.js';
import type { ConfigCodec, VariantDescriptor, ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { VariantId } from '../variant.js';
import { VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { checkReportData } from '../snp/checks.js';
import { AZURE_HCL_REPORT_NV_INDEX, checkHclAttestationKey, parseHclReport } from '../snp/hcl.js';
import { encodeSnpInstanceInfo, type SnpInstanceInfo } from '../snp/instance-info.js';
import type { MaaTokenVerifier } from '../snp/maa.js';
import type { SnpReport } from '../snp/report.js';
import { AZURE_IMDS_BASE_URL, fetchThimCertificates } from '../snp/thim.js';
import { documentAk, documentSnpInfo, snpVerifierFor, type SnpValidatorDependencies } from '../snp/validator.js';
import { loadAzurePersistedAk } from '../azure/persisted-ak.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('azure-sev-snp', '1.3.9900.4.1');

/** Options of the Azure issuer (tests point them at local servers). */
export interface AzureSevSnpIssuerOptions {
  readonly imdsBaseUrl?: string;
  readonly fetchImpl?: typeof fetch;
  readonly eventLog?: () => Promise<Buffer>;
}

/** azure-sev-snp issuer. */
export class AzureSevSnpIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, options: AzureSevSnpIssuerOptions = {}) {
    super({
      variant: VARIANT,
      openTpm,
      akKind: 'rsa',
      ...(options.eventLog ? { eventLog: options.eventLog } : {}),
      loadAttestationKey: loadAzurePersistedAk,
      instanceInfo: async (tpm, _extraData, signal) => {
        const hcl = parseHclReport(await tpm.nvRead(AZURE_HCL_REPORT_NV_INDEX));
        const thim = await fetchThimCertificates(options.imdsBaseUrl ?? AZURE_IMDS_BASE_URL, signal, options.fetchImpl);
        return encodeSnpInstanceInfo({
          reportSigner: Buffer.from(thim.vcekPem),
          certChain: Buffer.from(thim.chainPem),
          attestationReport: hcl.report,
          azure: { runtimeData: hcl.runtimeData, maaToken: '' },
          gcp: null,
        });
      },
    });
  }
}

/**
 * The ID-key digest policy: the report's digest is accepted, or by policy MAAFallback (an MAA
 * token for this extraData), WarnOnly (a warning), Equal (ID_KEY_UNTRUSTED).
 */
export async function checkIdKeyDigest(
  report: SnpReport,
  signer: SnpFirmwareSignerConfig,
  info: SnpInstanceInfo,
  extraData: Uint8Array,
  maa: MaaTokenVerifier | undefined,
  logger: AttestationLogger,
  signal?: AbortSignal,
): Promise<void> {
  if (signer.acceptedKeyDigests.some((d) => d.equals(report.idKeyDigest))) return;
  const reported = report.idKeyDigest.toString('hex');
  const accepted = signer.acceptedKeyDigests.map((d) => d.toString('hex'));
  const details = { field: 'idKeyDigest', expected: accepted, actual: reported, policy: signer.enforcementPolicy };
  switch (signer.enforcementPolicy) {
    case 'WarnOnly':
      logger.warn('configured idkeydigests do not contain the reported one (WarnOnly: accepted)', details);
      return;
    case 'MAAFallback':
      if (!maa) throw new AttestationError('ID_KEY_UNTRUSTED', `report ID key digest ${reported} is not accepted and no MAA token verifier is configured (MAAFallback)`, { details });
      if (!info.azure?.maaToken) throw new AttestationError('ID_KEY_UNTRUSTED', `report ID key digest ${reported} is not accepted and the document has no MAA token (MAAFallback)`, { details });
      await maa.verify(info.azure.maaToken, signer.maaURL, extraData, signal);
      logger.info('ID key digest accepted through the MAA token', { idKeyDigest: reported });
      return;
    default:
      throw new AttestationError('ID_KEY_UNTRUSTED', `report ID key not trusted: configured idkeydigests ${accepted.join(', ') || '(none)'} don't contain reported idkeydigest ${reported}`, { details });
  }
}

/** azure-sev-snp validator. */
export class AzureSevSnpValidator extends VtpmValidator {
  constructor(config: AzureSevSnpConfig, logger: AttestationLogger = NOP_ATTESTATION_LOGGER, deps: SnpValidatorDependencies = {}) {
    const verifier = snpVerifierFor(config, deps, logger, { minimumTcb: true });
    super({
      variant: VARIANT,
      measurements: config.measurements,
      logger,
      getTrustedKey: async (doc, extraData, signal) => {
        const ak = documentAk(doc);
        const info = documentSnpInfo(doc);
        if (!info.azure) throw new AttestationError('DOCUMENT_MALFORMED', 'SNP instance info has no Azure section', { details: { field: 'InstanceInfo.Azure' } });
        const runtimeDigest = createHash('sha256').update(info.azure.runtimeData).digest();
        const { report } = await verifier.verify(
          { report: info.attestationReport, reportSigner: info.reportSigner, certChain: info.certChain },
          (r) => checkReportData(r, runtimeDigest, 'SHA-256 of the HCL runtime data'),
          signal,
        );
        await checkIdKeyDigest(report, config.firmwareSignerConfig, info, extraData, deps.maa, logger, signal);
        checkHclAttestationKey(info.azure.runtimeData, ak);
        return ak;
      },
    });
  }
}

/** Builds the azure-sev-snp validator from its config (registered in ../variants.ts). */
export const azureSevSnpValidatorFactory: ValidatorConstructor = (config, logger, deps) => new AzureSevSnpValidator(config as AzureSevSnpConfig, logger, deps.snp);

/** The SEV-SNP config plus `firmwareSignerConfig` (ID-key digests, enforcement policy, MAA URL). */
const azureSevSnpCodec: ConfigCodec = {
  decode: (input) => ({
    variant: 'azure-sev-snp',
    ...decodeSevSnpBase(input),
    firmwareSignerConfig: decodeFirmwareSignerConfig(input.reader, input.reader.required(input.obj, 'firmwareSignerConfig', 'firmwareSignerConfig'), 'firmwareSignerConfig'),
  }),
  encode: (cfg, m) => encodeSevSnp(cfg as AzureSevSnpConfig, m, `,"firmwareSignerConfig":${encodeFirmwareSignerConfig((cfg as AzureSevSnpConfig).firmwareSignerConfig, goJsonString)}`),
  defaults: (measurements) => ({
    variant: 'azure-sev-snp',
    ...defaultSevSnpBase(measurements),
    firmwareSignerConfig: { acceptedKeyDigests: DEFAULT_ACCEPTED_KEY_DIGESTS.map((d) => Buffer.from(d, 'hex')), enforcementPolicy: 'MAAFallback', maaURL: '' },
  }),
};

/** `azure-sev-snp`: SEV-SNP on Azure behind the HCL, VCEK from THIM or AMD KDS (`amd-kds`), MAA as ID-key fallback (`maa`). */
export const azureSevSnpVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'Azure',
  offeredBy: { Azure: 0 },
  platform: 'tpm',
  config: azureSevSnpCodec,
  defaultMeasurements: vtpmDefaults,
  issuer: (env) => new AzureSevSnpIssuer(env.openTpm, env.metadataUrl ? { imdsBaseUrl: env.metadataUrl } : {}),
  validator: azureSevSnpValidatorFactory,
  sources: ['amd-kds', 'maa'],
  amdSigner: 'vcek',
};
