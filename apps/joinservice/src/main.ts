#!/usr/bin/env node
/**
 * joinservice entry point (docs/protocol/join-ticket.md): flags -> Kubernetes clients -> cert cache (SNP) / TDX collateral cache ->
 * hot-reloading validator -> API server endpoint -> keyservice client -> measurement salt ->
 * join.API over aTLS (clients must attest) + health + metrics -> SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CachedTdxCollateralSource,
  CollateralCache,
  DEFAULT_ACCEPTED_TCB_STATUSES,
  httpCertificateFetcher,
  pcsCollateralFetcher,
  registerAzureTdxValidator,
  registerQemuTdxValidator,
  validatorFromConfigJson,
  type ValidatorDependencies,
} from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import { BootstrapTokenIssuer, clientsFromKubeconfigFile, clientsInCluster, ConfigMapIdentityBindings, ConfigMapStore, JoiningNodeWriter, NodeVersionReader, SharedBootstrapTokens, type KubeClients } from '@asterism/k8s';
import { createLogger, levelFromVerbosity, SecretRegistry, type Logger } from '@asterism/logger';
import { AwsSdkCloudApi, cloudMetadata, parseCloudKind, QemuMetadataClient, QEMU_METADATA_BASE_URL, StaticFileMetadata, type MetadataProvider } from '@asterism/metadata';
import { handleShutdownSignals, parseFlagsOrExit } from '@asterism/service-runtime';
import { ConfigWatcher } from './attestation/config-watcher.js';
import { UpdatableValidator } from './attestation/updatable-validator.js';
import { CertCache } from './certcache/cert-cache.js';
import { ConfigMapCollateralStore } from './certcache/collateral-store.js';
import { HttpKdsChainSource } from './certcache/kds-client.js';
import { CollateralCounts, SNP_VARIANTS, snpValidatorDependencies } from './certcache/snp-collateral.js';
import { parseFlags, USAGE, type JoinServiceConfig } from './flags.js';
import { MetadataPeerDirectory } from './identity/peer-directory.js';
import { KeyServiceClient } from './keyservice-client.js';
import { ClusterComponents, KubeadmJoinTokens } from './kubernetes/cluster-sources.js';
import { ClusterConfigurationSans, ControlPlaneFilesReader } from './kubernetes/kubeadm-files.js';
import { KubeletCa } from './kubernetes/kubelet-ca.js';
import { startJoinService, type JoinServiceOptions, type RunningJoinService } from './service.js';
import { EmergencySshCa } from './ssh/emergency-ssh-ca.js';

/** A startup step failed: logged, exit 1 (the reference's behaviour for every step). */
class StartupError extends Error {}

async function step<T>(logger: Logger, what: string, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    logger.error(`${what} failed`, { err });
    throw new StartupError(what);
  }
}

function metadataFor(config: JoinServiceConfig): MetadataProvider {
  if (config.cloudProvider === 'QEMU') return new QemuMetadataClient(config.metadataUrl ?? QEMU_METADATA_BASE_URL);
  const cloud = parseCloudKind(config.cloudProvider);
  if (!cloud) throw new Error(`cloud provider ${config.cloudProvider}: pass --api-server-endpoint (no metadata provider for it)`);
  return cloudMetadata(cloud, { metadataUrl: config.metadataUrl, apiUrl: config.cloudApiUrl });
}

/** `<own VPC IP>:6443` from the platform's metadata (docs/protocol/cloud-metadata.md), unless given by flag. */
async function apiServerEndpoint(config: JoinServiceConfig): Promise<string> {
  if (config.apiServerEndpoint) return config.apiServerEndpoint;
  const self = await metadataFor(config).self(AbortSignal.timeout(30_000));
  if (!self.VPCIP) throw new Error('metadata has no VPC IP for this node');
  return `${self.VPCIP}:6443`;
}

/**
 * `--identity-binding=strict`: the peer directory (the local cluster's metadata file, else the
 * platform's metadata provider: instance names, roles and VPC IPs) and the binding store
 * (immutable ConfigMaps). A provider without a metadata client cannot run strict.
 */
function identityBinding(config: JoinServiceConfig, clients: KubeClients) {
  if (config.identityBinding === 'off') return undefined;
  let metadata: MetadataProvider;
  try {
    metadata = config.metadataFile ? new StaticFileMetadata(config.metadataFile, '') : metadataFor(config);
  } catch (err) {
    throw new Error(`--identity-binding=strict needs a metadata source for peer names and roles (pass --identity-binding=off): ${(err as Error).message}`, { cause: err });
  }
  return { directory: new MetadataPeerDirectory(metadata), store: new ConfigMapIdentityBindings(new ConfigMapStore(clients.core)) };
}

/** What every stage needs: the parsed flags, the logger and the Kubernetes clients. */
interface Wiring {
  cfg: JoinServiceConfig;
  logger: Logger;
  clients: KubeClients;
  collateralCounts: CollateralCounts;
}

async function main(): Promise<void> {
  const config = parseFlagsOrExit('joinservice', USAGE, () => parseFlags(process.argv.slice(2)));
  if (config === null) return;
  const secrets = new SecretRegistry();
  const logger = createLogger({ component: 'joinservice', level: levelFromVerbosity(config.verbosity), secrets });
  try {
    const clients: KubeClients = await step(logger, 'creating Kubernetes client', () => (config.kubeconfig ? clientsFromKubeconfigFile(config.kubeconfig) : clientsInCluster()));
    const w: Wiring = { cfg: config, logger, clients, collateralCounts: new CollateralCounts() };
    const deps = await validatorDependencies(w);
    const attestationConfigPath = join(config.configDir, 'attestationConfig');
    const validator = await step(logger, `loading attestation config ${attestationConfigPath}`, () =>
      UpdatableValidator.create(attestationConfigPath, (json) => validatorFromConfigJson(json, config.variant, logger, deps), logger),
    );
    const keys = new KeyServiceClient(config.keyServiceEndpoint);
    const service = await serve(w, validator, keys);
    const watcher = new ConfigWatcher(attestationConfigPath, () => validator.reload(), logger);
    await step(logger, `watching ${attestationConfigPath}`, () => watcher.start());
    handleShutdownSignals(logger, async () => {
      watcher.stop();
      await service.stop();
      keys.close();
    });
  } catch (err) {
    if (err instanceof StartupError) {
      setImmediate(() => process.exit(1));
      return;
    }
    throw err;
  }
}

/** SEV-SNP certificate and collateral caches (SNP variants only). */
async function snpDependencies({ cfg, clients, logger, collateralCounts }: Wiring): Promise<ValidatorDependencies['snp']> {
  if (!SNP_VARIANTS.has(cfg.variant.name)) return undefined;
  return step(logger, 'creating SEV-SNP certificate and collateral caches', () =>
    snpValidatorDependencies({
      variant: cfg.variant.name,
      certCache: new CertCache(new ConfigMapStore(clients.core), new HttpKdsChainSource(cfg.amdKdsUrl), logger),
      store: new ConfigMapCollateralStore(new ConfigMapStore(clients.core)),
      metrics: collateralCounts,
      logger,
      offline: cfg.collateralOffline,
      ...(cfg.amdKdsUrl ? { kdsBaseUrl: cfg.amdKdsUrl } : {}),
      ...(cfg.snpUpcomingMinimumTcb ? { upcomingMinimumTcb: cfg.snpUpcomingMinimumTcb } : {}),
    }),
  );
}

/**
 * One TDX collateral cache for the process (it outlives config reloads): Intel PCS (or
 * `--intel-pcs-url`) fetches bounded by the handshake's deadline, shared per key, backed off on
 * failure, refreshed before "next update". Verified collateral is persisted in a ConfigMap, so
 * restarts and replicas reuse it. The validators get the operator's TCB status policy
 * (`--tdx-accepted-tcb-statuses`). TDX variants only.
 */
async function registerTdxCollateral({ cfg, clients, logger, collateralCounts }: Wiring): Promise<void> {
  if (cfg.variant.name !== 'qemu-tdx' && cfg.variant.name !== 'azure-tdx') return;
  const tdxCache = new CollateralCache({
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
  await step(logger, 'loading the TDX collateral cache', () => tdxCache.load());
  const tdxCollateral = new CachedTdxCollateralSource(tdxCache);
  const policy = cfg.tdxAcceptedTcbStatuses ? { acceptedTcbStatuses: cfg.tdxAcceptedTcbStatuses } : {};
  logger.info('TDX TCB status policy', { accepted: cfg.tdxAcceptedTcbStatuses ?? [...DEFAULT_ACCEPTED_TCB_STATUSES], pcs: cfg.intelPcsUrl ?? 'Intel', offline: cfg.collateralOffline });
  registerQemuTdxValidator(tdxCollateral, policy);
  registerAzureTdxValidator(tdxCollateral, policy);
}

/**
 * The validators' outside sources. azure-trustedlaunch follows the AK certificate's CA Issuers
 * URLs for links the document lacks (chains still end in the configured root); gcp-sev-es asks
 * the Compute API with the node's service-account token; aws-nitro-tpm asks EC2 DescribeImages
 * (the SDK client of the AWS metadata provider; --cloud-api-url points it elsewhere, e.g. an EC2
 * emulator).
 */
async function validatorDependencies(w: Wiring): Promise<ValidatorDependencies> {
  const snp = await snpDependencies(w);
  await registerTdxCollateral(w);
  return {
    azureTrustedLaunch: { fetchCertificate: httpCertificateFetcher() },
    awsNitroTpm: { images: new AwsSdkCloudApi(w.cfg.cloudApiUrl ? { endpoint: w.cfg.cloudApiUrl } : {}) },
    ...(snp ? { snp } : {}),
  };
}

/** The ticket issuer's sources: API server endpoint, measurement salt, cluster CA, SSH CA, Kubernetes readers. */
async function ticketIssuer({ cfg, logger, clients }: Wiring, keys: KeyServiceClient): Promise<JoinServiceOptions['issuer']> {
  const endpoint = await step(logger, 'determining API server endpoint', () => apiServerEndpoint(cfg));
  const measurementSalt = await step(logger, 'reading measurement salt', () => readFile(join(cfg.configDir, 'measurementSalt')));
  const pkiDir = join(cfg.kubernetesDir, 'pki');
  const kubeletCa = await step(logger, `loading the cluster CA from ${pkiDir}`, () => KubeletCa.load(pkiDir));
  return {
    keys,
    tokens: new KubeadmJoinTokens(new SharedBootstrapTokens(new BootstrapTokenIssuer(clients.core)), join(cfg.kubernetesDir, 'admin.conf'), endpoint),
    components: new ClusterComponents(new NodeVersionReader(clients.custom), new ConfigMapStore(clients.core)),
    kubeletCa,
    controlPlaneFiles: new ControlPlaneFilesReader(cfg.kubernetesDir),
    joiningNodes: new JoiningNodeWriter(clients.custom),
    certSans: new ClusterConfigurationSans(cfg.kubeadmConfigPath),
    sshCa: new EmergencySshCa(),
    measurementSalt,
  };
}

/** join.API over aTLS (clients must attest), health and metrics servers. */
async function serve(w: Wiring, validator: UpdatableValidator, keys: KeyServiceClient): Promise<RunningJoinService> {
  const { cfg, logger, clients } = w;
  const issuer = await ticketIssuer(w, keys);
  const identity = await step(logger, 'setting up identity binding', () => identityBinding(cfg, clients));
  return startJoinService({
    issuer,
    ...(identity ? { identity } : {}),
    validator,
    transport: (v) => {
      const credentials = atlsServerCredentials({ clientValidators: [v], logger });
      return { credentials, refusals: () => credentials.refusals, attestedPeer: (peer) => credentials.peerOf({ getPeer: () => peer }) };
    },
    logger,
    host: cfg.host,
    port: cfg.port,
    metricsPort: cfg.metricsPort,
    ratePerSecond: cfg.ratePerSecond,
    rateBurst: cfg.rateBurst,
    collateralCounts: w.collateralCounts,
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`joinservice: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
