/**
 * What a variant is, as one object (docs/adr/0035-variant-descriptor-table.md): its identity, its
 * attestation config codec, its default measurements, how a node issues its evidence, how a
 * verifier builds its validator and which outside sources that validator needs. Each variant
 * module in this folder exports one {@link VariantDescriptor}; the table (./table.ts) lists them
 * and every app iterates that table instead of switching on variant names.
 */
import type { TpmClient } from '@asterism/tpm';
import { AttestationError } from '../errors.js';
import type { ImageTpmSupportLookup } from '../aws/image-lookup.js';
import type { CertificateFetcher } from '../cloud/http.js';
import type { ConfigCodec } from '../config/codec.js';
import type { AttestationConfig } from '../config/types.js';
import type { ShieldedIdentitySource } from '../gcp/gce-identity.js';
import type { AttestationLogger, Issuer, Validator } from '../interfaces.js';
import type { Measurements } from '../measurements/measurements.js';
import type { SnpValidatorDependencies } from '../snp/validator.js';
import type { TdxCollateralSource } from '../tdx/pcs-collateral.js';
import type { TdxQuoteVerifier } from '../tdx/quote-provider.js';
import type { TdxStatusPolicy } from '../tdx/status-policy.js';
import type { TsmFileSystem } from '../tsm/configfs-tsm.js';
import type { CloudProvider, VariantId } from '../variant.js';

export type { ConfigCodec, ConfigInput } from '../config/codec.js';

/** What the TDX validators need from their process: Intel PCS collateral, the TCB status policy, optionally a verifier and a clock. */
export interface TdxValidatorDependencies extends TdxStatusPolicy {
  readonly collateral: TdxCollateralSource;
  /** Default: a DcapVerifier with the config's (or the embedded) Intel root. */
  readonly verifier?: TdxQuoteVerifier;
  readonly clock?: () => Date;
}

/**
 * What validators may need besides their config: caches, identity sources, a clock. The process
 * that builds validators (joinservice, CLI) creates the parts a variant's
 * {@link VariantDescriptor.sources} name, once; each variant reads its own part.
 */
export interface ValidatorDependencies {
  /** `amd-kds` (+ `maa`, `gce-shielded-identity` for the SNP variants that name them). */
  readonly snp?: SnpValidatorDependencies;
  /** `intel-pcs`. */
  readonly tdx?: TdxValidatorDependencies;
  /** `ak-ca-issuers`: follows "CA Issuers" links an AK certificate chain lacks. */
  readonly azureTrustedLaunch?: { readonly fetchCertificate?: CertificateFetcher; readonly clock?: () => Date };
  /** `ec2-images`: EC2 DescribeImages. */
  readonly awsNitroTpm?: { readonly images: ImageTpmSupportLookup };
  /** `gce-shielded-identity` for the vTPM-only GCE variant. */
  readonly gcpSevEs?: { readonly identity: ShieldedIdentitySource };
}

/**
 * The outside sources a validator can need; an app builds each kind in one place (its source
 * builders) and merges the parts into {@link ValidatorDependencies}.
 */
export type ValidatorSourceKind = 'amd-kds' | 'maa' | 'gce-shielded-identity' | 'intel-pcs' | 'ak-ca-issuers' | 'ec2-images';

/** Builds a validator of one variant from its decoded attestation config. */
export type ValidatorConstructor = (config: AttestationConfig, logger: AttestationLogger, deps: ValidatorDependencies) => Validator;

/** Where a node's attestation interfaces are, for the issuer factories (the bootstrapper builds it from its flags). */
export interface IssuerEnvironment {
  /** Opens the node's (shared) TPM; unused by variants without one. */
  readonly openTpm: () => Promise<TpmClient>;
  /** The firmware's TCG event log (empty when the kernel exposes none). */
  readonly eventLog: () => Promise<Buffer>;
  /** Prefix of every node path (`/` on a real node). */
  readonly stateRoot: string;
  /** The cloud's instance metadata service; undefined = its link-local default. */
  readonly metadataUrl?: string;
  /** configfs-tsm file operations (tests replay recorded bytes through a fake). */
  readonly tsmFs?: TsmFileSystem;
}

/** One attestation variant. */
export interface VariantDescriptor {
  /** Name and certificate-extension OID (docs/protocol/attestation-variants.md). */
  readonly variant: VariantId;
  /** The provider whose default measurements the variant ships (docs/protocol/measurements.md). */
  readonly csp: CloudProvider;
  /** Providers that offer the variant, with its rank there (0 = that provider's default variant). */
  readonly offeredBy: Partial<Readonly<Record<CloudProvider, number>>>;
  /** `tpm`: evidence from (and cluster-ID mark in) a TPM, PCR 15; `tdx`: a TD quote, mark in RTMR 2. */
  readonly platform: 'tpm' | 'tdx';
  /** No security (dummy): not offered to users, runs without expected measurements, documents carry no attestation key. */
  readonly insecure?: boolean;
  readonly config: ConfigCodec;
  /** A fresh copy of the expected measurements shipped for `csp` (placeholders where the image decides). */
  defaultMeasurements(): Measurements;
  /** Fixed PCR values (hex) the measurement generator sets for this variant before the provider's overrides. */
  readonly imageMeasurementOverrides?: ReadonlyArray<readonly [index: number, hex: string]>;
  /** The node side; undefined = this build has no issuer for the variant. */
  issuer?(env: IssuerEnvironment): Issuer;
  /** The verifier side. */
  readonly validator: ValidatorConstructor;
  /** Outside sources the validator needs from its process. */
  readonly sources: readonly ValidatorSourceKind[];
  /** SEV-SNP: which KDS chain the joinservice's certificate cache keeps for this variant (VCEK or VLEK signer). */
  readonly amdSigner?: 'vcek' | 'vlek';
}

/** The validator of `variant` cannot be built: its process did not provide source `kind` (CONFIG_INVALID, naming both). */
export function missingSource(variant: VariantId, kind: ValidatorSourceKind): AttestationError {
  return new AttestationError('CONFIG_INVALID', `no validator for attestation variant "${variant.name}" in this process: it needs the ${kind} source, which was not provided`, {
    details: { variant: variant.name, source: kind },
  });
}
