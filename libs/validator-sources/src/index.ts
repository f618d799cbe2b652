/**
 * @asterism/validator-sources: the outside sources a node validator needs (collateral caches,
 * cloud identity services), built once per process from the variant's descriptor, with the flags
 * that configure them and their metrics. See ../README.md.
 */
export { validatorDependencies, buildSource, type SourceWiring } from './sources.js';
export { parseSourceFlags, SOURCE_FLAG_OPTIONS, sourceFlagsUsage, type ValidatorSourceConfig } from './source-flags.js';
export { registerCollateralMetrics, type CollateralCountsView } from './collateral-metrics.js';
export { CollateralCounts, snpValidatorDependencies, type SnpDependencySources } from './certcache/snp-collateral.js';
export { CertCache, CertCacheError, CERT_CACHE_CONFIGMAP, CERT_CACHE_NAMESPACE, splitKdsChain, type AmdCertChain, type CertCacheStore, type KdsChainSource } from './certcache/cert-cache.js';
export { collateralConfigMapName, ConfigMapCollateralStore, COLLATERAL_NAMESPACE } from './certcache/collateral-store.js';
export { AMD_KDS_BASE_URL, HttpKdsChainSource } from './certcache/kds-client.js';
