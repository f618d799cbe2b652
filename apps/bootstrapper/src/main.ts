#!/usr/bin/env node
/**
 * bootstrapper entry point (docs/protocol/bootstrapper.md): flags/environment -> TPM, issuer, node lock,
 * metadata, state disk -> node condition -> InitServer || JoinClient race (or rejoin) ->
 * status file. With the local backend the process stays up as the node's agent (and, on the
 * first control plane, as the supervisor of its control plane and services) until SIGTERM.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { DummyIssuer, QemuVtpmIssuer, type Issuer } from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import { createLogger, levelFromVerbosity, SecretRegistry, type Logger } from '@asterism/logger';
import { QemuMetadataClient, StaticFileMetadata, type MetadataProvider } from '@asterism/metadata';
import { NodeLock, TpmNodeMarker } from '@asterism/nodelock';
import { handleShutdownSignals, parseFlagsOrExit } from '@asterism/service-runtime';
import { CryptsetupStateDisk, STATE_DISK_PBKDF_PRESETS } from './disk/state-disk.js';
import { parseFlags, USAGE, type BootstrapperConfig } from './flags.js';
import { OsHostInfo } from './host/host-info.js';
import { FileLogSource } from './host/log-source.js';
import { InitFlow } from './initserver/init-flow.js';
import { InitServer } from './initserver/init-server.js';
import type { ClusterInitializer } from './initserver/ports.js';
import { AtlsJoinServiceDialer } from './joinclient/atls-dialer.js';
import { JoinClient } from './joinclient/join-client.js';
import type { ClusterJoiner } from './joinclient/ports.js';
import { RejoinClient } from './joinclient/rejoin-client.js';
import { KubeadmBackend } from './kubernetes/kubeadm/kubeadm-backend.js';
import { LocalClusterInitializer, LocalClusterJoiner } from './kubernetes/local/local-backend.js';
import { LocalServiceProcesses } from './kubernetes/local/services.js';
import { detectNodeCondition } from './node-condition.js';
import { KubeletCsrGenerator } from './node-identity/kubelet-csr.js';
import { EmergencySshSetup, HostKeyFile } from './node-identity/ssh.js';
import { RecoveryServer } from './recovery/recovery-server.js';
import { raceForDiskKey } from './recovery/unlock-race.js';
import { VerificationService } from './verify/verification-service.js';
import { runBootstrapper, type NodeControl, type RunResult } from './run.js';
import { NodeFileWriter } from './state/file-writer.js';
import { NODE_STATE_PATH, readNodeState } from './state/node-state.js';
import { writeStatusFile, type NodeStatus } from './status-file.js';
import { SharedTpm } from './tpm/tpm-opener.js';

/** Exit code of a "reboot" in local mode (the supervisor decides whether to start the node again). */
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

function issuerFor(config: BootstrapperConfig, tpm: SharedTpm): Issuer {
  switch (config.variant.name) {
    case 'qemu-vtpm':
      return new QemuVtpmIssuer(tpm.open);
    case 'dummy':
      return new DummyIssuer();
    default:
      throw new Error(`attestation variant ${config.variant.name} has no issuer in this build (qemu-vtpm, dummy)`);
  }
}

function metadataFor(config: BootstrapperConfig): MetadataProvider {
  if (config.metadata.startsWith('file:')) return new StaticFileMetadata(config.metadata.slice(5), config.nodeName!);
  return new QemuMetadataClient(config.metadata.replace(/\/$/, ''));
}

async function main(): Promise<void> {
  const started = Date.now();
  const config = parseFlagsOrExit('bootstrapper', USAGE, () => parseFlags(process.argv.slice(2)));
  if (config === null) return;
  const cfg = config;
  const secrets = new SecretRegistry();
  const logger = loggerFor(cfg, secrets);
  const files = new NodeFileWriter(cfg.stateRoot === '/' ? '' : cfg.stateRoot);
  const statusPath = files.resolve('/run/asterism/status.json');
  const status = (s: Omit<NodeStatus, 'name' | 'variant' | 'updatedAt'>) =>
    writeStatusFile(statusPath, { name: cfg.nodeName ?? '', variant: cfg.variant.name, ...s }).catch((err: unknown) => logger.warn('writing status file failed', { err }));
  await status({ phase: 'starting' });
  logger.info('bootstrapper starting', { variant: cfg.variant.name, csp: cfg.csp, backend: cfg.backend });

  const tpm = new SharedTpm(cfg.tpm, (count) => logger.warn('flushed transient TPM objects left by an earlier run', { count }));
  const issuer = issuerFor(cfg, tpm);
  const lock = new NodeLock(new TpmNodeMarker(tpm.open));
  const metadata = metadataFor(cfg);
  const disk = new CryptsetupStateDisk(cfg.stateDisk, cfg.initialKeyPath, STATE_DISK_PBKDF_PRESETS[cfg.stateDiskPbkdf]);
  const host = new OsHostInfo(cfg.addresses ? { addresses: cfg.addresses, ...(cfg.nodeName ? { hostname: cfg.nodeName } : {}) } : undefined);
  const hostKey = new HostKeyFile(files);
  const dialer = new AtlsJoinServiceDialer(issuer);

  let initializer: ClusterInitializer;
  let joiner: ClusterJoiner;
  let local: LocalClusterInitializer | undefined;
  if (cfg.backend === 'local') {
    const binDir = cfg.k8sBinDir ?? '';
    local = new LocalClusterInitializer({
      binaries: { etcd: join(binDir, 'etcd'), kubeApiserver: join(binDir, 'kube-apiserver'), kubeControllerManager: join(binDir, 'kube-controller-manager') },
      dir: files.resolve('/etc/kubernetes'),
      metadata,
      services: new LocalServiceProcesses({
        dir: files.resolve('/var/lib/asterism/services'),
        variant: cfg.variant.name,
        attestationConfigPath: cfg.joinAttestationConfig ?? '',
        keyServicePort: cfg.keyServicePort,
        joinServicePort: cfg.localJoinServicePort,
        // Any free port; the joinservice logs it ("joinservice serving", metricsPort).
        joinServiceMetricsPort: 0,
        keyServiceMetricsPort: 0,
        logger,
      }),
      logger,
      apiServerPort: cfg.apiServerPort,
    });
    initializer = local;
    joiner = new LocalClusterJoiner(logger);
  } else {
    const kubeadm = new KubeadmBackend({
      kubeadm: cfg.k8sBinDir ? join(cfg.k8sBinDir, 'kubeadm') : '/run/state/bin/kubeadm',
      metadata,
      csp: cfg.csp,
      logger,
      files,
      ...(cfg.imageRepository ? { imageRepository: cfg.imageRepository } : {}),
      ignorePreflightErrors: cfg.ignorePreflightErrors,
      ...(cfg.kubeProxyConntrackMaxPerCore !== undefined ? { kubeProxyConntrackMaxPerCore: cfg.kubeProxyConntrackMaxPerCore } : {}),
    });
    initializer = kubeadm;
    joiner = kubeadm;
  }

  let rebooting = false;
  const control: NodeControl = {
    markDiskForReset: () => disk.markForReset(),
    reboot: async (reason) => {
      rebooting = true;
      logger.error('node must reboot', { reason });
      await status({ phase: 'failed', error: reason });
      await local?.stop().catch(() => undefined);
      if (cfg.backend === 'kubeadm' && cfg.initSystem === 'systemd') spawn('systemctl', ['reboot'], { stdio: 'ignore', detached: true }).unref();
      setTimeout(() => process.exit(EXIT_REBOOT), 200);
    },
  };

  let rejoiner: RejoinClient | undefined;
  let recovery: RecoveryServer | undefined;
  const hostAddr = cfg.initHost.includes(':') ? `[${cfg.initHost}]` : cfg.initHost;
  const result: RunResult = await runBootstrapper({
    logger,
    control,
    condition: () => detectNodeCondition(tpm, disk, files.resolve(NODE_STATE_PATH)),
    rejoin: async () => {
      await status({ phase: 'waiting' });
      const state = await readNodeState(files.resolve(NODE_STATE_PATH));
      rejoiner = new RejoinClient({ dialer, metadata, disk, lock, measurementSalt: state.measurementSalt, logger }, { joinServicePort: cfg.joinServicePort });
      if (cfg.recoveryPort === 0) return (await rejoiner.run()) !== 'stopped';
      recovery = new RecoveryServer(disk, logger);
      const port = await recovery.listen(`${hostAddr}:${cfg.recoveryPort}`, atlsServerCredentials({ issuer, logger }));
      logger.info('recovery server waiting', { port });
      const unlocked = await raceForDiskKey({ rejoin: rejoiner, recovery, lock, measurementSalt: state.measurementSalt, logger });
      // The kubeadm node's process ends: stop serving. A local node keeps refusing later calls clearly.
      if (cfg.backend === 'kubeadm') await recovery.close();
      if (unlocked === 'stopped') return false;
      logger.info('state disk key delivered', { by: unlocked.by });
      return true;
    },
    startNodeAgent: async () => {
      if (cfg.backend === 'kubeadm' && cfg.initSystem === 'systemd') spawn('systemctl', ['enable', '--now', 'kubelet'], { stdio: 'ignore' });
      logger.info('node agent started', { kubelet: cfg.initSystem === 'systemd' ? 'kubelet.service' : 'started by the node supervisor' });
    },
    initServer: async (cleaner) => {
      const flow = new InitFlow({
        initSecretHash: await metadata.initSecretHash(),
        lock,
        disk,
        files,
        ssh: new EmergencySshSetup(files, hostKey),
        host,
        cluster: initializer,
        onLocked: () => cleaner.clean(),
        logger,
      });
      const server = new InitServer(flow, new FileLogSource(cfg.logFile ?? '/dev/null'), logger);
      const address = `${cfg.initHost.includes(':') ? `[${cfg.initHost}]` : cfg.initHost}:${cfg.initPort}`;
      await status({ phase: 'waiting' });
      return {
        serve: () => server.serve(address, atlsServerCredentials({ issuer, logger })),
        stop: () => server.stop(),
        get outcome() {
          return server.outcome;
        },
      };
    },
    joinClient: (cleaner) =>
      new JoinClient(
        { lock, dialer, metadata, disk, files, host, hostKey, csr: new KubeletCsrGenerator(), cluster: joiner, onLocked: () => cleaner.clean(), logger },
        { joinServicePort: cfg.joinServicePort },
      ),
  });
  if (rebooting || result === 'failed') return;
  const mark = await tpm.readMark().catch(() => undefined);
  const phase = result === 'stopped' ? 'stopped' : result;
  await status({ phase, bootstrapMs: Date.now() - started, ...(mark ? { pcr15: mark.toString('hex') } : {}) });
  logger.info('bootstrap finished', { result, bootstrapMs: Date.now() - started, pcr15: mark?.toString('hex') });
  if (cfg.backend === 'kubeadm' || result === 'stopped') {
    await tpm.close();
    setImmediate(() => process.exit(0));
    return;
  }
  // Local backend: this process is the node's agent (and node 0's control-plane supervisor).
  const verification = await startVerificationService(cfg, issuer, logger);
  handleShutdownSignals(logger, async () => {
    rejoiner?.stop();
    await recovery?.close();
    await verification?.close();
    await local?.stop();
    await tpm.close();
    await status({ phase: 'stopped' });
  });
}

/** The local backend's stand-in for the chart's verification-service pod (0 = off). */
async function startVerificationService(cfg: BootstrapperConfig, issuer: Issuer, logger: Logger): Promise<VerificationService | undefined> {
  if (cfg.verifyGrpcPort === 0) return undefined;
  const service = new VerificationService(issuer, logger);
  try {
    const ports = await service.listen(cfg.initHost, { grpc: cfg.verifyGrpcPort, http: cfg.verifyHttpPort });
    logger.info('verification service serving', ports);
    return service;
  } catch (err) {
    logger.warn('verification service not started', { err });
    await service.close().catch(() => undefined);
    return undefined;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bootstrapper: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
