#!/usr/bin/env node
/**
 * joinservice entry point (docs/protocol/join-ticket.md): flags -> Kubernetes clients -> cert cache (SNP) / TDX collateral cache ->
 * hot-reloading validator -> API server endpoint -> keyservice client -> measurement salt ->
 * join.API over aTLS (clients must attest) + health + metrics -> SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { validatorFromConfigJson } from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import {
  BootstrapTokenIssuer,
  clientsFromKubeconfigFile,
  clientsInCluster,
  ConfigMapIdentityBindings,
  configMapFeed,
  ConfigMapStore,
  HttpsConfigMapCreator,
  JoiningNodeWriter,
  NodeVersionReader,
  SharedBootstrapTokens,
  WatchedIdentityBindings,
  type KubeClients,
} from '@asterism/k8s';
import { createLogger, levelFromVerbosity, SecretRegistry, type Logger } from '@asterism/logger';
import { cloudMetadata, parseCloudKind, QemuMetadataClient, QEMU_METADATA_BASE_URL, StaticFileMetadata, type MetadataProvider } from '@asterism/metadata';
import { CachedDenyList, DenyListStore } from '@asterism/node-attestation';
import { handleShutdownSignals, parseFlagsOrExit } from '@asterism/service-runtime';
import { ConfigWatcher } from './attestation/config-watcher.js';
import { UpdatableValidator } from './attestation/updatable-validator.js';
import { parseFlags, USAGE, type JoinServiceConfig } from './flags.js';
import { MetadataPeerDirectory } from './identity/peer-directory.js';
import { KeyServiceClient } from './keyservice-client.js';
import { ClusterComponents, KubeadmJoinTokens } from './kubernetes/cluster-sources.js';
import { ClusterConfigurationSans, ControlPlaneFilesReader } from './kubernetes/kubeadm-files.js';
import { KubeletCa } from './kubernetes/kubelet-ca.js';
import { startJoinService, type JoinServiceOptions, type RunningJoinService } from './service.js';
import { EmergencySshCa } from './ssh/emergency-ssh-ca.js';
import { CollateralCounts, validatorDependencies } from '@asterism/validator-sources';

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
function identityBinding(config: JoinServiceConfig, clients: KubeClients, logger: Logger) {
  if (config.identityBinding === 'off') return undefined;
  let metadata: MetadataProvider;
  try {
    metadata = config.metadataFile ? new StaticFileMetadata(config.metadataFile, '') : metadataFor(config);
  } catch (err) {
    throw new Error(`--identity-binding=strict needs a metadata source for peer names and roles (pass --identity-binding=off): ${(err as Error).message}`, { cause: err });
  }
  // Lookups from a watch cache, creation create-only through the apiserver (docs/adr/0038).
  const configMaps = new ConfigMapStore(clients.core);
  const creator = new HttpsConfigMapCreator(clients.config, (...a) => configMaps.create(...a));
  const direct = new ConfigMapIdentityBindings({ get: (ns, name) => configMaps.get(ns, name), create: (...a) => creator.create(...a) });
  const store = new WatchedIdentityBindings(direct, configMapFeed(clients), { logger });
  store.start();
  return { directory: new MetadataPeerDirectory(metadata), store };
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
    const deps = await validatorDependencies({ ...w, step: (what, fn) => step(logger, what, fn) });
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
  const identity = await step(logger, 'setting up identity binding', () => identityBinding(cfg, clients, logger));
  return startJoinService({
    issuer,
    ...(identity ? { identity } : {}),
    // The attestation monitor's deny list (docs/adr/0037): re-read at most every 2 s, failing closed.
    denyList: new CachedDenyList(new DenyListStore(clients.core)),
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
