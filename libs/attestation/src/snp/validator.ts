/**
 * What the three SNP validators share: building the SnpVerifier of one attestation config
 * (trust anchor, signing keys known without KDS, policy, collateral views, clock, warnings) and
 * decoding the SNP instance info of a vTPM document.
 */
import { createHash } from 'node:crypto';
import { decodePublic, publicKeyObject, type TpmtPublic } from '@asterism/tpm';
import { ARK_MILAN_PEM } from '../config/roots.js';
import type { SevSnpConfigBase } from '../config/types.js';
import { AttestationError } from '../errors.js';
import type { AttestationLogger } from '../interfaces.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';
import { SignatureMemo } from './chain.js';
import { certificateBytes, MILAN_NAMES, parseAmdCertificate, type AmdCertificate } from './certs.js';
import { SnpCollateral, type ConfiguredAsks } from './collateral.js';
import type { GceShieldedIdentitySource } from './gce.js';
import { decodeSnpInstanceInfo, type SnpInstanceInfo } from './instance-info.js';
import type { MaaTokenVerifier } from './maa.js';
import type { TcbVersion } from './tcb.js';
import { SnpVerifier } from './verifier.js';
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

/** The configured ARK (amdRootKey), or the embedded ARK-Milan when unset. */
function trustAnchor(config: SevSnpConfigBase): AmdCertificate {
  const ark = parseAmdCertificate(config.amdRootKey ?? certificateBytes(ARK_MILAN_PEM, 'ARK'), 'amdRootKey');
  if (ark.subjectCn !== MILAN_NAMES.ark) throw configInvalid('amdRootKey', `certificate ${JSON.stringify(ark.subjectCn)} is not the ${MILAN_NAMES.ark} root`);
  return ark;
}

/** amdSigningKey (wins) and the cached signing keys, sorted into ASK (VCEK) and ASVK (VLEK). */
function signingKeys(config: SevSnpConfigBase, cached: readonly string[]): ConfiguredAsks {
  const out: { vcek?: AmdCertificate; vlek?: AmdCertificate } = {};
  const candidates = [...cached.map((pem) => certificateBytes(pem, 'cached ASK')), ...(config.amdSigningKey ? [config.amdSigningKey] : [])];
  for (const der of candidates) {
    const c = parseAmdCertificate(der, 'amdSigningKey');
    if (c.subjectCn === MILAN_NAMES.ask) out.vcek = c;
    else if (c.subjectCn === MILAN_NAMES.asvk) out.vlek = c;
    else throw configInvalid('amdSigningKey', `certificate ${JSON.stringify(c.subjectCn)} is neither ${MILAN_NAMES.ask} nor ${MILAN_NAMES.asvk}`);
  }
  return out;
}

const versions = (c: SevSnpConfigBase): TcbVersion => ({ bootloader: c.bootloaderVersion.value, tee: c.teeVersion.value, snp: c.snpVersion.value, microcode: c.microcodeVersion.value });

/**
 * The verifier of one config. The config's four versions are the minimum launch TCB of every SNP
 * variant and, with `minimumTcb` (Azure), also the minimum of current/committed/reported TCB.
 */
export function snpVerifierFor(config: SevSnpConfigBase, deps: SnpValidatorDependencies, logger: AttestationLogger, options: { minimumTcb: boolean }): SnpVerifier {
  const ark = trustAnchor(config);
  const memo = new SignatureMemo();
  const now = deps.now ?? (() => new Date());
  const collateral = deps.collateral ?? new SnpCollateral({ logger });
  const min = versions(config);
  return new SnpVerifier({
    ark,
    memo,
    now,
    logger,
    collateral: collateral.views(ark, memo, now, signingKeys(config, deps.cachedSigningKeys ?? [])),
    policy: { vmpl: 0, minimumLaunchTcb: min, minimumTcb: options.minimumTcb ? min : undefined, permitProvisionalFirmware: true },
    ...(deps.warnings ? { warnings: deps.warnings } : {}),
  });
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
