import {
  AzureTdxValidator,
  CachedTdxCollateralSource,
  CollateralCache,
  DcapVerifier,
  INTEL_SGX_ROOT_CA_PEM,
  pcsCollateralFetcher,
  QemuTdxValidator,
  type AttestationConfig,
  type AzureTdxConfig,
  type PcsFetcherOptions,
  type Validator,
} from '@asterism/attestation';
import { RecordingTdxVerifier } from '../verify/tdx-report.js';
import { FileCollateralStore } from './file-collateral-store.js';

/** Where the TDX validators of the CLI get Intel's collateral and which root they trust. */
export interface TdxCollateralOptions {
  /** Keep verified PCS collateral here between runs (`--collateral-dir`). */
  readonly collateralDir?: string;
  /** Never contact Intel PCS (`--collateral-offline`): only what `collateralDir` holds. */
  readonly collateralOffline?: boolean;
  /** PCS and root-CRL URLs (default Intel's; a local server in tests). */
  readonly pcs?: PcsFetcherOptions;
  /** The Intel SGX root (PEM or DER) quotes and collateral must chain to; default the azure-tdx config's `intelRootKey`, else the embedded one. */
  readonly intelRoot?: Buffer | string;
  /** Verification time (tests with dated vectors); default now. */
  readonly clock?: () => Date;
}

/** A TDX validator with the verifier that records the DCAP outcome, and its cleanup. */
export interface TdxValidatorParts {
  readonly validator: Validator;
  readonly tdx: RecordingTdxVerifier;
  /** Waits for collateral still being written to `collateralDir`, stops background fetches. */
  close(): Promise<void>;
}

/**
 * The qemu-tdx / azure-tdx validator of a one-shot CLI run (docs/protocol/tdx-dcap.md): DCAP
 * collateral from Intel PCS through a collateral cache (docs/collateral.md) that is optionally
 * backed by a directory and optionally offline; no background retries (the run is short).
 * Both the collateral and the quote are verified against the same root.
 */
export async function tdxValidator(att: AttestationConfig, options: TdxCollateralOptions): Promise<TdxValidatorParts> {
  const root = options.intelRoot ?? (att.variant === 'azure-tdx' ? (att as AzureTdxConfig).intelRootKey : null) ?? INTEL_SGX_ROOT_CA_PEM;
  const clock = options.clock;
  const cache = new CollateralCache({
    name: 'tdx-pcs',
    fetch: pcsCollateralFetcher(options.pcs ?? {}),
    retry: { maxAttempts: 0 },
    ...(options.collateralDir ? { store: new FileCollateralStore(options.collateralDir) } : {}),
    ...(options.collateralOffline ? { offline: true } : {}),
    ...(clock ? { now: () => clock().getTime() } : {}),
  });
  await cache.load();
  const collateral = new CachedTdxCollateralSource(cache, root);
  const tdx = new RecordingTdxVerifier(new DcapVerifier({ trustedRoot: root }));
  const common = { collateral, verifier: tdx, ...(clock ? { clock } : {}) };
  const validator = att.variant === 'azure-tdx' ? new AzureTdxValidator({ config: att as AzureTdxConfig, ...common }) : new QemuTdxValidator({ measurements: att.measurements, ...common });
  return {
    validator,
    tdx,
    close: async () => {
      await cache.flush();
      cache.close();
    },
  };
}
