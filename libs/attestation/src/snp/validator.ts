/**
 * What the three SNP validators share: building the SnpVerifier of one attestation config
 * (trust anchor, signing keys known without KDS, policy, collateral views, clock, warnings) and
 * decoding the SNP instance info of a vTPM document.
 */
import { createHash } from 'node:crypto';
import { decodePublic, publicKeyObject, type TpmtPublic } from '@asterism/tpm';
import { ARK_GENOA_PEM, ARK_MILAN_PEM, ARK_TURIN_PEM } from '../config/roots.js';
import type { SevSnpConfigBase } from '../config/types.js';
import { AttestationError } from '../errors.js';
import type { AttestationLogger } from '../interfaces.js';
import type { SnpReportPolicy } from './checks.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';
import { lineOfArk, SignatureMemo } from './chain.js';
import { certificateBytes, parseAmdCertificate, type AmdCertificate } from './certs.js';
import { SnpCollateral, type ConfiguredAsks } from './collateral.js';
import type { GceShieldedIdentitySource } from './gce.js';
import { decodeSnpInstanceInfo, type SnpInstanceInfo } from './instance-info.js';
import type { MaaTokenVerifier } from './maa.js';
import { AMD_PRODUCT_LINES, amdNames, lineOfCommonName, type AmdProductLine } from './lines.js';
import type { TcbVersion } from './tcb.js';
import { SnpVerifier, type SnpAnchor } from './verifier.js';
import type { SnpWarningOptions } from './warnings.js';

/** What an SNP validator gets besides its config (the joinservice injects all of it). */
export interface SnpValidatorDependencies {
  /** Process-wide KDS collateral caches; default: a private, online one. */
  readonly collateral?: SnpCollateral;
  /** PEM ASK/ASVK from the joinservice's certificate cache (`sev-snp-cert-cache`). */
  readonly cachedSigningKeys?: readonly string[];
  /** Verification time (tests pin it); default the real clock. */
  readonly now?: () => Date;
  readonly warnings?: SnpWarningOptions;
  /** gcp-sev-snp: where the trusted AK of a GCE instance comes from. */
  readonly gceIdentity?: GceShieldedIdentitySource;
  /** azure-sev-snp with MAAFallback: MAA token verification. */
  readonly maa?: MaaTokenVerifier;
}

const configInvalid = (field: string, message: string) => new AttestationError('CONFIG_INVALID', `${field}: ${message}`, { details: { field } });

/** AMD's ARK of each line, embedded (config/roots.ts). */
const EMBEDDED_ARKS: Record<AmdProductLine, string> = { Milan: ARK_MILAN_PEM, Genoa: ARK_GENOA_PEM, Turin: ARK_TURIN_PEM };

/** The configured ARK (amdRootKey: ARK-Milan, ARK-Genoa or ARK-Turin), or the embedded ARK-Milan when unset. */
function trustAnchor(config: SevSnpConfigBase): AmdCertificate {
  const ark = parseAmdCertificate(config.amdRootKey ?? certificateBytes(ARK_MILAN_PEM, 'ARK'), 'amdRootKey');
  if (!lineOfArk(ark)) throw configInvalid('amdRootKey', `certificate ${JSON.stringify(ark.subjectCn)} is not an AMD root (${AMD_PRODUCT_LINES.map((l) => amdNames(l).ark).join(', ')})`);
  return ark;
}

/**
 * amdSigningKey (wins) and the cached signing keys, sorted by product line into ASK (VCEK) and
 * ASVK (VLEK).
 */
function signingKeys(config: SevSnpConfigBase, cached: readonly string[]): Map<AmdProductLine, ConfiguredAsks> {
  const out = new Map<AmdProductLine, { vcek?: AmdCertificate; vlek?: AmdCertificate }>();
  const candidates = [...cached.map((pem) => certificateBytes(pem, 'cached ASK')), ...(config.amdSigningKey ? [config.amdSigningKey] : [])];
  for (const der of candidates) {
    const c = parseAmdCertificate(der, 'amdSigningKey');
    const line = lineOfCommonName(c.subjectCn);
    const names = line && amdNames(line);
    if (!line || !names || c.subjectCn === names.ark) throw configInvalid('amdSigningKey', `certificate ${JSON.stringify(c.subjectCn)} is neither an ASK (SEV-<line>) nor an ASVK (SEV-VLEK-<line>)`);
    const asks = out.get(line) ?? {};
    if (c.subjectCn === names.ask) asks.vcek = c;
    else asks.vlek = c;
    out.set(line, asks);
  }
  return out;
}

const versions = (c: SevSnpConfigBase): TcbVersion => ({ bootloader: c.bootloaderVersion.value, tee: c.teeVersion.value, snp: c.snpVersion.value, microcode: c.microcodeVersion.value });

/**
 * The verifier of one config. The config's four versions are the minimum launch TCB of every SNP
 * variant and, with `minimumTcb` (Azure), also the minimum of current/committed/reported TCB. The
 * configured ARK anchors its own product line; the other lines are anchored by AMD's embedded
 * ARKs (docs/adr/0010-sev-snp-verification-in-house.md).
 */
export function snpVerifierFor(config: SevSnpConfigBase, deps: SnpValidatorDependencies, logger: AttestationLogger, options: { minimumTcb: boolean }): SnpVerifier {
  const ark = trustAnchor(config);
  const memo = new SignatureMemo();
  const now = deps.now ?? (() => new Date());
  const collateral = deps.collateral ?? new SnpCollateral({ logger });
  const asks = signingKeys(config, deps.cachedSigningKeys ?? []);
  const anchor = (a: AmdCertificate): SnpAnchor => ({ ark: a, collateral: collateral.views(a, memo, now, asks.get(lineOfArk(a)!) ?? {}) });
  const configuredLine = lineOfArk(ark);
  const otherLines = AMD_PRODUCT_LINES.filter((l) => l !== configuredLine).map((l) => anchor(parseAmdCertificate(certificateBytes(EMBEDDED_ARKS[l], 'ARK'), `ARK-${l}`)));
  const min = versions(config);
  return new SnpVerifier({
    ...anchor(ark),
    otherLines,
    memo,
    now,
    logger,
    policy: { vmpl: 0, minimumLaunchTcb: min, minimumTcb: options.minimumTcb ? min : undefined, permitProvisionalFirmware: true, ...reportRequirements(config) },
    ...(deps.warnings ? { warnings: deps.warnings } : {}),
  });
}

/** The optional report version / mitigation requirements of the config (off when absent). */
function reportRequirements(config: SevSnpConfigBase): Pick<SnpReportPolicy, 'minimumReportVersion' | 'requiredLaunchMitigations' | 'requiredCurrentMitigations'> {
  return {
    ...(config.minimumReportVersion !== undefined ? { minimumReportVersion: config.minimumReportVersion } : {}),
    ...(config.requiredLaunchMitigations !== undefined ? { requiredLaunchMitigations: config.requiredLaunchMitigations } : {}),
    ...(config.requiredCurrentMitigations !== undefined ? { requiredCurrentMitigations: config.requiredCurrentMitigations } : {}),
  };
}

/** The document's AK (`ak_pub`); AK_UNTRUSTED when it does not decode. */
export function documentAk(doc: VtpmAttestationDocument): TpmtPublic {
  try {
    return decodePublic(doc.attestation?.akPub ?? Buffer.alloc(0));
  } catch (err) {
    throw new AttestationError('AK_UNTRUSTED', `validating attestation public key: decoding public key: ${(err as Error).message}`, { cause: err, details: { field: 'ak_pub' } });
  }
}

/** The SNP instance info of a document. */
export function documentSnpInfo(doc: VtpmAttestationDocument): SnpInstanceInfo {
  return decodeSnpInstanceInfo(doc.instanceInfo);
}

/** SHA-512 of the AK's SubjectPublicKeyInfo (DER): AWS's REPORT_DATA. */
export function akDigest(ak: TpmtPublic): Buffer {
  return createHash('sha512').update(publicKeyObject(ak).export({ type: 'spki', format: 'der' })).digest();
}

/** extraData zero-padded to 64 bytes: GCP's REPORT_DATA. */
export function paddedReportData(extraData: Uint8Array): Buffer {
  if (extraData.length > 64) throw new AttestationError('REPORT_DATA_MISMATCH', `extraData of ${extraData.length} bytes does not fit REPORT_DATA (64)`, { details: { field: 'reportData' } });
  const out = Buffer.alloc(64);
  out.set(extraData);
  return out;
}
