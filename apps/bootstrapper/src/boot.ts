/**
 * The bootstrapper's stages (docs/protocol/bootstrapper.md), the same for every node runtime:
 * TPM, issuer, node lock, metadata, state disk -> node condition -> InitServer || JoinClient race
 * (or rejoin) -> status file -> exit, or stay as the node's agent when the runtime says so. What
 * differs between runtimes (Kubernetes init/join, kubelet, reboot, residency) is behind
 * {@link NodeRuntime} (runtime/node-runtime.ts, docs/adr/0036-node-runtime.md); the composition
 * root (main.ts, or tools/simulated-node) chooses it.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Issuer } from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import { createLogger, levelFromVerbosity, SecretRegistry, type Logger } from '@asterism/logger';
import type { MetadataProvider } from '@asterism/metadata';
import { NodeLock } from '@asterism/nodelock';
import { handleShutdownSignals } from '@asterism/service-runtime';
import { STATE_DISK_BINDS, StateDiskMapper } from './disk/disk-mapper.js';
import { CryptsetupStateDisk, STATE_DISK_PBKDF_PRESETS } from './disk/state-disk.js';
import type { BootstrapperConfig } from './flags.js';
import { OsHostInfo } from './host/host-info.js';
import { FileLogSource } from './host/log-source.js';
import { InitFlow } from './initserver/init-flow.js';
import { InitServer } from './initserver/init-server.js';
import type { ClusterInitializer } from './initserver/ports.js';
import { AtlsJoinServiceDialer } from './joinclient/atls-dialer.js';
import { JoinClient } from './joinclient/join-client.js';
import type { ClusterJoiner } from './joinclient/ports.js';
import { TcpReadinessProbe } from './joinclient/readiness-probe.js';
import { RejoinClient } from './joinclient/rejoin-client.js';
import { metadataFor } from './metadata-source.js';
import { waitForMetadata } from './network-wait.js';
import { detectNodeCondition } from './node-condition.js';
import { KubeletCsrGenerator } from './node-identity/kubelet-csr.js';
import { InitDiskBinder } from './node-identity/init-disk-binding.js';
import { readNodeIdentity } from './node-identity/node-self.js';
import { EmergencySshSetup, HostKeyFile } from './node-identity/ssh.js';
import { RecoveryServer } from './recovery/recovery-server.js';
import { raceForDiskKey } from './recovery/unlock-race.js';
import type { NodeRuntime, NodeRuntimeFactory } from './runtime/node-runtime.js';
import type { Cleaner } from './clean/cleaner.js';
import { runBootstrapper, type InitService, type NodeCondition, type NodeControl, type RunResult } from './run.js';
import { NodeFileWriter } from './state/file-writer.js';
import { NODE_STATE_PATH, readNodeState } from './state/node-state.js';
import { NodeStatusFile, type StatusUpdate } from './status-file.js';
import { nodePlatformFor, releaseAttestationKeys, type NodePlatform } from '@asterism/node-platform';

/** Exit code of a "reboot" (a supervisor without systemd decides whether to start the node again). */
export const EXIT_REBOOT = 3;

function loggerFor(config: BootstrapperConfig, secrets: SecretRegistry): Logger {
  let stream: NodeJS.WritableStream = process.stderr;
  if (config.logFile) {
    mkdirSync(dirname(config.logFile), { recursive: true });
    const tee = new PassThrough();
    const file = createWriteStream(config.logFile, { flags: 'a', mode: 0o600 });
    tee.on('data', (d: Buffer) => {
      process.stderr.write(d);
      file.write(d);
    });
    stream = tee;
  }
  return createLogger({ component: 'bootstrapper', level: levelFromVerbosity(config.verbosity), secrets, stream, defaultMeta: config.nodeName ? { node: config.nodeName } : {} });
}

/** Writes the node's status file (phase, timings, milestones, mark, refusal counters); failures are only logged. */
type StatusWriter = (s: StatusUpdate) => Promise<void>;

/** Everything the boot stages share, built once from the flags. */
interface BootNode {
  cfg: BootstrapperConfig;
  logger: Logger;
  files: NodeFileWriter;
  status: StatusWriter;
  /** The status file itself: servers register their refusal counters with it (docs/adr/0007). */
  statusFile: NodeStatusFile;
  /** TPM or TDX device: issuer, cluster-ID marker and mark reader (platform.ts). */
  platform: NodePlatform;
  issuer: Issuer;
  lock: NodeLock;
  metadata: MetadataProvider;
  disk: CryptsetupStateDisk;
  /** The disk-mapper role (--map-state-disk, docs/adr/0041); undefined = header-only state disk. */
  mapper: StateDiskMapper | undefined;
  host: OsHostInfo;
  hostKey: HostKeyFile;
  dialer: AtlsJoinServiceDialer;
  /** Kubernetes init/join, kubelet, reboot and residency of this node (runtime/node-runtime.ts). */
  runtime: NodeRuntime;
}

/** Long-lived pieces a rejoin leaves running (stopped on SIGTERM by a resident process). */
interface RejoinSession {
  rejoiner?: RejoinClient;
  recovery?: RecoveryServer;
}

/** Runs the bootstrapper's stages for one node with the runtime `runtimeFor` builds. */
export async function bootNode(config: BootstrapperConfig, runtimeFor: NodeRuntimeFactory): Promise<void> {
  const started = Date.now();
  const node = await wireNode(config, runtimeFor);
  let rebooting = false;
  const session: RejoinSession = {};
  const result: RunResult = await runBootstrapper({
    logger: node.logger,
    control: nodeControl(node, () => (rebooting = true)),
    condition: () => nodeCondition(node),
    rejoin: () => rejoinStage(node, session),
    startNodeAgent: async () => node.runtime.startNodeAgent(),
    initServer: (cleaner) => initServerStage(node, cleaner),
    joinClient: (cleaner) =>
      new JoinClient(
        { ...pick(node, 'lock', 'dialer', 'metadata', 'disk', 'files', 'host', 'hostKey', 'logger'), csr: new KubeletCsrGenerator(), probe: new TcpReadinessProbe(), cluster: joinerAfterDisk(node), onLocked: () => cleaner.clean(), onReachable: (at) => void node.status({ phase: 'waiting', joinServiceReachableAt: at.toISOString() }) },
        { joinServicePort: node.cfg.joinServicePort, joinTimeoutMs: node.cfg.joinTimeoutMs },
      ),
  });
  if (rebooting || result === 'failed') return;
  await finishBoot(node, result, started, session);
}

/** Logger, status file, platform (TPM or TDX: issuer, marker), lock, metadata, state disk, host facts, dialer and node runtime. */
async function wireNode(cfg: BootstrapperConfig, runtimeFor: NodeRuntimeFactory): Promise<BootNode> {
  const secrets = new SecretRegistry();
  const logger = loggerFor(cfg, secrets);
  const files = new NodeFileWriter(cfg.stateRoot === '/' ? '' : cfg.stateRoot);
  const statusFile = new NodeStatusFile(files.resolve('/run/asterism/status.json'), { name: cfg.nodeName ?? '', variant: cfg.variant.name }, (err) =>
    logger.warn('writing status file failed', { err }),
  );
  const status: StatusWriter = (s) => statusFile.update(s);
  await status({ phase: 'starting' });
  const metadata = metadataFor(cfg);
  const runtime = runtimeFor({ cfg, metadata, files, logger });
  logger.info('bootstrapper starting', { variant: cfg.variant.name, csp: cfg.csp, runtime: runtime.name });

  const platform = nodePlatformFor(cfg, (count) => logger.warn('flushed transient TPM objects left by an earlier run', { count }));
  const issuer = platform.issuer;
  const mapper = cfg.mapStateDisk ? stateDiskMapper(cfg, files, logger) : undefined;
  return {
    cfg,
    logger,
    files,
    status,
    statusFile,
    platform,
    issuer,
    lock: new NodeLock(platform.marker),
    metadata,
    disk: new CryptsetupStateDisk(cfg.stateDisk, cfg.initialKeyPath, STATE_DISK_PBKDF_PRESETS[cfg.stateDiskPbkdf], () => mapper?.diskReady() ?? Promise.resolve()),
    mapper,
    host: new OsHostInfo(cfg.addresses ? { addresses: cfg.addresses, ...(cfg.nodeName ? { hostname: cfg.nodeName } : {}) } : undefined),
    hostKey: new HostKeyFile(files),
    dialer: new AtlsJoinServiceDialer(issuer, cfg.joinSourceAddress ? { localAddress: cfg.joinSourceAddress } : {}),
    runtime,
  };
}

/** The disk mapper of a node with device-mapper: the state disk mounted at /run/state, containerd's, the kubelet's and kubeadm's folders on it. */
function stateDiskMapper(cfg: BootstrapperConfig, files: NodeFileWriter, logger: Logger): StateDiskMapper {
  return new StateDiskMapper(
    {
      device: cfg.stateDisk,
      initialKeyPath: cfg.initialKeyPath,
      mappingName: 'state',
      mountPoint: files.resolve('/run/state'),
      binds: STATE_DISK_BINDS.map((b) => files.resolve(b)),
      services: cfg.initSystem === 'systemd' ? ['containerd.service'] : [],
    },
    logger,
  );
}

/**
 * The node's condition. With the disk mapper, the state disk is prepared first: a fresh one is
 * formatted and opened in the background (nothing is on it yet, so the node is fresh unless its
 * register says otherwise; init and join wait for the disk), a cluster's disk stays locked
 * and the node must rejoin (its node state is on that disk). Then the network stage: the metadata
 * source must answer (network-wait.ts).
 */
async function nodeCondition(node: BootNode): Promise<NodeCondition> {
  const prepared = await node.mapper?.prepare();
  // Every later stage talks to the network; the image starts the bootstrapper before
  // network-online.target. A `file:` metadata source (the local cluster's) needs no network.
  if (!node.cfg.metadata.startsWith('file:')) await waitForMetadata(node.metadata, node.logger);
  if (prepared === 'locked') return 'initialized';
  return detectNodeCondition(node.platform.mark, node.disk, node.files.resolve(NODE_STATE_PATH));
}

/** The runtime's cluster init, started only once the state disk's services (containerd) are active (docs/adr/0041-state-disk-mapper.md). */
function initializerAfterDisk(node: BootNode): ClusterInitializer {
  const { initializer } = node.runtime;
  return {
    initCluster: async (req, signal) => {
      await node.mapper?.servicesReady();
      return initializer.initCluster(req, signal);
    },
    ...(initializer.startServices ? { startServices: (signal?: AbortSignal) => initializer.startServices!(signal) } : {}),
  };
}

/** The runtime's cluster join, started only once the state disk's services (containerd) are active. */
function joinerAfterDisk(node: BootNode): ClusterJoiner {
  const { joiner } = node.runtime;
  return {
    joinCluster: async (req, signal) => {
      await node.mapper?.servicesReady();
      return joiner.joinCluster(req, signal);
    },
  };
}

/** Reboot policy: the runtime asks for the reboot (systemd) or stops what it supervises; the process exits with EXIT_REBOOT. */
function nodeControl(node: BootNode, onReboot: () => void): NodeControl {
  const { logger } = node;
  return {
    markDiskForReset: () => node.disk.markForReset(),
    reboot: async (reason) => {
      onReboot();
      logger.error('node must reboot', { reason });
      await node.status({ phase: 'failed', error: reason });
      await node.runtime.reboot().catch((err: unknown) => logger.warn('runtime reboot step failed', { err }));
      setTimeout(() => process.exit(EXIT_REBOOT), 200);
    },
  };
}

/** `host:port` for a listener on the configured init host (IPv6 in brackets). */
function listenAddress(cfg: BootstrapperConfig, port: number): string {
  return `${cfg.initHost.includes(':') ? `[${cfg.initHost}]` : cfg.initHost}:${port}`;
}

/** An initialised node after a reboot: rejoin through a joinservice, racing the recovery server when it is enabled. */
async function rejoinStage(node: BootNode, session: RejoinSession): Promise<boolean> {
  const { cfg, logger, lock } = node;
  await node.status({ phase: 'waiting' });
  const statePath = node.files.resolve(NODE_STATE_PATH);
  const { mapper } = node;
  // A mapped disk holds the node state: it is read once the delivered key opened the disk.
  const openState = mapper
    ? async (key: Uint8Array) => {
        await mapper.unlock(key);
        return (await readNodeState(statePath)).measurementSalt;
      }
    : ((salt: Buffer) => async () => salt)((await readNodeState(statePath)).measurementSalt);
  const rejoiner = new RejoinClient({ ...pick(node, 'dialer', 'metadata', 'disk', 'lock', 'logger'), probe: new TcpReadinessProbe(), openState }, { joinServicePort: cfg.joinServicePort });
  session.rejoiner = rejoiner;
  if (cfg.recoveryPort === 0) return (await rejoiner.run()) !== 'stopped';
  const recovery = new RecoveryServer(node.disk, logger);
  session.recovery = recovery;
  const credentials = atlsServerCredentials({ issuer: node.issuer, logger });
  node.statusFile.addRefusalSource('recoveryServer', { atls: credentials, callsRefused: () => recovery.refusedCalls });
  node.statusFile.startRefreshing();
  const port = await recovery.listen(listenAddress(cfg, cfg.recoveryPort), credentials);
  logger.info('recovery server waiting', { port });
  const unlocked = await raceForDiskKey({ rejoin: rejoiner, recovery, lock, openState, logger });
  // A process that ends stops serving; one that stays resident keeps refusing later calls clearly.
  if (!node.runtime.keepsRecoveryServer) await recovery.close();
  if (unlocked === 'stopped') return false;
  logger.info('state disk key delivered', { by: unlocked.by });
  return true;
}

/** The InitServer over aTLS (the node attests), built from the init flow. */
async function initServerStage(node: BootNode, cleaner: Cleaner): Promise<InitService> {
  const { cfg, logger } = node;
  const flow = new InitFlow({
    ...pick(node, 'lock', 'disk', 'files', 'host', 'logger'),
    initSecretHash: await node.metadata.initSecretHash(),
    ssh: new EmergencySshSetup(node.files, node.hostKey),
    cluster: initializerAfterDisk(node),
    identity: { read: (signal) => readNodeIdentity(node.metadata, signal) },
    diskBinding: new InitDiskBinder({ issuer: node.issuer, storeFor: async (kc) => (await import('./node-identity/cluster-binding-store.js')).clusterBindingStore(kc), logger }),
    onLocked: () => cleaner.clean(),
  });
  const server = new InitServer(flow, new FileLogSource(cfg.logFile ?? '/dev/null'), logger);
  const credentials = atlsServerCredentials({ issuer: node.issuer, logger });
  node.statusFile.addRefusalSource('initServer', { atls: credentials, initSecretAttemptsRefused: () => server.refusedAttempts });
  node.statusFile.startRefreshing();
  await node.status({ phase: 'waiting' });
  return {
    serve: () => server.serve(listenAddress(cfg, cfg.initPort), credentials),
    stop: () => server.stop(),
    get outcome() {
      return server.outcome;
    },
  };
}

/**
 * Status and log line with the mark; then exit, unless the runtime keeps this process as the
 * node's agent (its resident agent is stopped on SIGTERM).
 */
async function finishBoot(node: BootNode, result: RunResult, started: number, session: RejoinSession): Promise<void> {
  const { logger, platform } = node;
  const mark = await platform.mark.readMark().catch(() => undefined);
  const phase = result === 'stopped' ? 'stopped' : result;
  await node.status({ phase, bootstrapMs: Date.now() - started, ...(mark ? { pcr15: mark.toString('hex') } : {}) });
  logger.info('bootstrap finished', { result, bootstrapMs: Date.now() - started, pcr15: mark?.toString('hex') });
  const releasePlatform = async () => {
    await session.recovery?.close();
    await releaseAttestationKeys(node.issuer);
    await platform.close();
  };
  const resident = await node.runtime.afterBoot({ result, issuer: node.issuer, releasePlatform });
  if (!resident) {
    logger.info('bootstrapper exiting: nothing left to supervise on this node', { result });
    setImmediate(() => process.exit(0));
    return;
  }
  logger.info('bootstrapper staying resident', { reason: resident.reason });
  handleShutdownSignals(logger, async () => {
    session.rejoiner?.stop();
    await session.recovery?.close();
    await resident.stop();
    await releaseAttestationKeys(node.issuer);
    await platform.close();
    await node.status({ phase: 'stopped' });
  });
}

/** The listed fields of `node` (to hand a subset of the shared pieces to a component). */
function pick<K extends keyof BootNode>(node: BootNode, ...keys: K[]): Pick<BootNode, K> {
  return Object.fromEntries(keys.map((k) => [k, node[k]])) as Pick<BootNode, K>;
}
