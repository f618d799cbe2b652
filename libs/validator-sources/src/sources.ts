/**
 * The outside sources of a service's validators (docs/adr/0035-variant-descriptor-table.md): the
 * variant's descriptor names the kinds it needs, and this module builds each kind once for the
 * process — the SEV-SNP KDS and certificate caches, MAA, the GCE identity, the TDX collateral
 * cache, the AK chain fetcher, EC2 DescribeImages. They outlive config reloads. The joinservice
 * and the attestation monitor build theirs here, so both judge a node with the same collateral.
 */
import {
  CachedTdxCollateralSource,
  CollateralCache,
  DEFAULT_ACCEPTED_TCB_STATUSES,
  GceComputeShieldedIdentity,
  GceMetadataClient,
  httpCertificateFetcher,
  JwksMaaTokenVerifier,
  pcsCollateralFetcher,
  variantDescriptor,
  type ValidatorDependencies,
  type ValidatorSourceKind,
} from '@asterism/attestation';
import { ConfigMapStore, type KubeClients } from '@asterism/k8s';
import type { Logger } from '@asterism/logger';
import { AwsSdkCloudApi } from '@asterism/metadata';
import { CertCache } from './certcache/cert-cache.js';
import { ConfigMapCollateralStore } from './certcache/collateral-store.js';
import { HttpKdsChainSource } from './certcache/kds-client.js';
import { snpValidatorDependencies, type CollateralCounts } from './certcache/snp-collateral.js';
import type { ValidatorSourceConfig } from './source-flags.js';

/** What the sources are built from, and how a start-up step reports failure (logged, then exit). */
export interface SourceWiring {
  readonly cfg: ValidatorSourceConfig;
  readonly logger: Logger;
  readonly clients: KubeClients;
  readonly collateralCounts: CollateralCounts;
  readonly step: <T>(what: string, fn: () => Promise<T> | T) => Promise<T>;
}

type SourceBuilder = (w: SourceWiring) => Promise<ValidatorDependencies>;

/**
 * SEV-SNP: one KDS collateral cache persisted in ConfigMaps, and the certificate cache of the KDS
 * chain the variant's signer needs.
 */
const amdKds: SourceBuilder = async ({ cfg, clients, logger, collateralCounts, step }) => ({
  snp: await step('creating SEV-SNP certificate and collateral caches', () => {
    const signer = variantDescriptor(cfg.variant).amdSigner;
    return snpValidatorDependencies({
      ...(signer ? { signer } : {}),
      certCache: new CertCache(new ConfigMapStore(clients.core), new HttpKdsChainSource(cfg.amdKdsUrl), logger),
      store: new ConfigMapCollateralStore(new ConfigMapStore(clients.core)),
      metrics: collateralCounts,
      logger,
      offline: cfg.collateralOffline,
      ...(cfg.amdKdsUrl ? { kdsBaseUrl: cfg.amdKdsUrl } : {}),
      ...(cfg.snpUpcomingMinimumTcb ? { upcomingMinimumTcb: cfg.snpUpcomingMinimumTcb } : {}),
    });
  }),
});

/**
 * One TDX collateral cache for the process: Intel PCS (or `--intel-pcs-url`) fetches bounded by
 * the handshake's deadline, shared per key, backed off on failure, refreshed before "next
 * update". Verified collateral is persisted in a ConfigMap, so restarts and replicas reuse it.
 * The validators get the operator's TCB status policy (`--tdx-accepted-tcb-statuses`).
 */
const intelPcs: SourceBuilder = async ({ cfg, clients, logger, collateralCounts, step }) => {
  const cache = new CollateralCache({
    name: 'tdx-pcs',
    fetch: pcsCollateralFetcher({
      ...(cfg.intelPcsUrl ? { baseUrl: cfg.intelPcsUrl } : {}),
      ...(cfg.intelRootCrlUrl ? { rootCrlUrl: cfg.intelRootCrlUrl } : {}),
    }),
    offline: cfg.collateralOffline,
    store: new ConfigMapCollateralStore(new ConfigMapStore(clients.core)),
    metrics: collateralCounts,
    logger,
  });
  await step('loading the TDX collateral cache', () => cache.load());
  logger.info('TDX TCB status policy', { accepted: cfg.tdxAcceptedTcbStatuses ?? [...DEFAULT_ACCEPTED_TCB_STATUSES], pcs: cfg.intelPcsUrl ?? 'Intel', offline: cfg.collateralOffline });
  return { tdx: { collateral: new CachedTdxCollateralSource(cache), ...(cfg.tdxAcceptedTcbStatuses ? { acceptedTcbStatuses: cfg.tdxAcceptedTcbStatuses } : {}) } };
};

/** Each kind of source as a cluster service provides it. */
const SOURCES: Readonly<Record<ValidatorSourceKind, SourceBuilder>> = {
  'amd-kds': amdKds,
  // azure-sev-snp with MAAFallback: MAA token verification.
  maa: async () => ({ snp: { maa: new JwksMaaTokenVerifier() } }),
  // The Compute API with the node's service-account token from the GCE metadata server.
  'gce-shielded-identity': async () => {
    const metadata = new GceMetadataClient();
    return { snp: { gceIdentity: new GceComputeShieldedIdentity((signal) => metadata.accessToken(signal)) } };
  },
  'intel-pcs': intelPcs,
  // The AK certificate's CA Issuers URLs for links the document lacks (chains still end in the configured root).
  'ak-ca-issuers': async () => ({ azureTrustedLaunch: { fetchCertificate: httpCertificateFetcher() } }),
  // EC2 DescribeImages through the AWS SDK; --cloud-api-url points it elsewhere (e.g. an EC2 emulator).
  'ec2-images': async ({ cfg }) => ({ awsNitroTpm: { images: new AwsSdkCloudApi(cfg.cloudApiUrl ? { endpoint: cfg.cloudApiUrl } : {}) } }),
};

/** One source's part of the dependencies. */
export function buildSource(kind: ValidatorSourceKind, w: SourceWiring): Promise<ValidatorDependencies> {
  return SOURCES[kind](w);
}

/** The dependencies of the configured variant's validator: every source its descriptor names, merged (parts of one slot, e.g. `snp`, combined). */
export async function validatorDependencies(w: SourceWiring): Promise<ValidatorDependencies> {
  const out: Record<string, object> = {};
  for (const kind of variantDescriptor(w.cfg.variant).sources) {
    for (const [slot, part] of Object.entries(await buildSource(kind, w))) out[slot] = { ...out[slot], ...(part as object) };
  }
  return out as ValidatorDependencies;
}
