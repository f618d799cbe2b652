import { CachedTdxCollateralSource, CollateralCache, DcapVerifier, INTEL_SGX_ROOT_CA_PEM, pcsCollateralFetcher, type AttestationConfig, type PcsFetcherOptions, type ValidatorDependencies } from '@asterism/attestation';
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

/** The `intel-pcs` source of a CLI run: the TDX validators' dependencies, the verifier that records the DCAP outcome, and its cleanup. */
export interface TdxSourceParts {
  readonly deps: ValidatorDependencies;
  readonly tdx: RecordingTdxVerifier;
  /** Waits for collateral still being written to `collateralDir`, stops background fetches. */
  close(): Promise<void>;
}

/**
 * The Intel PCS source of the TDX validators (qemu-tdx, azure-tdx) for a one-shot CLI run
 * (docs/protocol/tdx-dcap.md): DCAP collateral from Intel PCS through a collateral cache
 * (docs/collateral.md) that is optionally backed by a directory and optionally offline; no
 * background retries (the run is short). Both the collateral and the quote are verified against
 * the same root: `--intel-root`, else the config's `intelRootKey` (azure-tdx), else the embedded one.
 */
export async function tdxSources(att: AttestationConfig, options: TdxCollateralOptions): Promise<TdxSourceParts> {
  const configured = 'intelRootKey' in att ? att.intelRootKey : null;
  const root = options.intelRoot ?? configured ?? INTEL_SGX_ROOT_CA_PEM;
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
  return {
    deps: { tdx: { collateral, verifier: tdx, ...(clock ? { clock } : {}) } },
    tdx,
    close: async () => {
      await cache.flush();
      cache.close();
    },
  };
}
