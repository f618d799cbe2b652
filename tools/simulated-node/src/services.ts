import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess, waitFor } from '@asterism/k8s-controlplane';
import type { Logger } from '@asterism/logger';
import type { ClusterServices, ClusterServicesContext } from './local-backend.js';
import { programCommand, type LocalPrograms } from './programs.js';

/** The joinservice flag for the node's metadata source. */
function metadataArgs(metadata: string | undefined): string[] {
  if (!metadata) return [];
  return metadata.startsWith('file:') ? [`--metadata-file=${metadata.slice(5)}`] : [`--metadata-url=${metadata.replace(/\/$/, '')}`];
}

/** Options of the local cluster's service processes. */
export interface LocalServicesOptions {
  /** State folder for their files and logs. */
  dir: string;
  /** Attestation variant of joining nodes and the file with their attestation config (JSON). */
  variant: string;
  attestationConfigPath: string;
  keyServicePort: number;
  joinServicePort: number;
  /** -1 = no metrics endpoints. */
  keyServiceMetricsPort?: number;
  joinServiceMetricsPort?: number;
  /**
   * The node's metadata source (`file:<path>` or a qemu metadata API URL): the joinservice looks up
   * peer names and roles there (`--identity-binding=strict`, docs/adr/0008). Absent: its default.
   */
  metadata?: string;
  /** Bundles and Node flags to run the services with (`--local-apps`); absent: the sources through tsx. */
  programs?: LocalPrograms;
  logger: Logger;
}

/**
 * Runs the keyservice and the joinservice as child processes of node 0 with the files a Helm
 * deployment would mount: the master secret + salt (keyservice), the join-config (attestation
 * config + measurement salt) and the kubeadm files (joinservice).
 */
export class LocalServiceProcesses implements ClusterServices {
  #procs = new Map<string, ManagedProcess>();
  #stopping = false;

  constructor(private readonly o: LocalServicesOptions) {}

  /** Where the joinservice reads its attestation config (edit it to change what is accepted). */
  get attestationConfigPath(): string {
    return join(this.o.dir, 'join-config', 'attestationConfig');
  }

  async start(ctx: ClusterServicesContext): Promise<void> {
    const ks = join(this.o.dir, 'keyservice');
    const jc = join(this.o.dir, 'join-config');
    const logs = join(this.o.dir, 'logs');
    for (const d of [ks, jc, logs]) await mkdir(d, { recursive: true, mode: 0o700 });
    await writeFile(join(ks, 'mastersecret'), ctx.secrets.masterSecret, { mode: 0o600 });
    await writeFile(join(ks, 'salt'), ctx.secrets.masterSalt, { mode: 0o600 });
    await writeFile(join(jc, 'measurementSalt'), ctx.secrets.measurementSalt, { mode: 0o600 });
    await copyFile(this.o.attestationConfigPath, this.attestationConfigPath);

    const keyCmd = programCommand('keyservice', this.o.programs);
    const keyLog = join(logs, 'keyservice.log');
    this.o.logger.info('starting keyservice', { host: ctx.nodeIp, port: this.o.keyServicePort });
    const keyservice = this.supervise('keyservice', keyCmd.binary, [
      ...keyCmd.args,
      `--host=${ctx.nodeIp}`,
      `--port=${this.o.keyServicePort}`,
      `--master-secret=${join(ks, 'mastersecret')}`,
      `--salt=${join(ks, 'salt')}`,
      `--metrics-port=${this.o.keyServiceMetricsPort ?? -1}`,
    ], keyLog);
    await waitFor('keyservice', async () => (await readFile(keyLog, 'utf8')).includes('keyservice serving'), {
      timeoutMs: 60_000,
      alive: () => keyservice().running,
    });

    const joinCmd = programCommand('joinservice', this.o.programs);
    const joinLog = join(logs, 'joinservice.log');
    this.o.logger.info('starting joinservice', { host: ctx.nodeIp, port: this.o.joinServicePort, variant: this.o.variant });
    const joinservice = this.supervise('joinservice', joinCmd.binary, [
      ...joinCmd.args,
      '--cloud-provider=qemu',
      `--attestation-variant=${this.o.variant}`,
      `--key-service-endpoint=${ctx.nodeIp}:${this.o.keyServicePort}`,
      `--host=${ctx.nodeIp}`,
      `--port=${this.o.joinServicePort}`,
      `--metrics-port=${this.o.joinServiceMetricsPort ?? -1}`,
      `--config-dir=${jc}`,
      `--kubeadm-config=${ctx.clusterConfigurationPath}`,
      `--kubernetes-dir=${ctx.kubernetesDir}`,
      `--kubeconfig=${ctx.adminKubeconfigPath}`,
      `--api-server-endpoint=${ctx.apiServerEndpoint}`,
      ...metadataArgs(this.o.metadata),
    ], joinLog);
    await waitFor('joinservice', async () => (await readFile(joinLog, 'utf8')).includes('joinservice serving'), {
      timeoutMs: 60_000,
      alive: () => joinservice().running,
    });
  }

  /** Pid of a running service (fault scenarios kill it). */
  pid(name: 'keyservice' | 'joinservice'): number | undefined {
    return this.#procs.get(name)?.child.pid;
  }

  /**
   * Starts a service and restarts it whenever it exits unexpectedly (1 s pause), like a pod's
   * restart policy. Returns a getter for the current process.
   */
  private supervise(name: string, binary: string, args: string[], log: string): () => ManagedProcess {
    const launch = () => {
      const p = ManagedProcess.start(name, binary, args, log);
      this.#procs.set(name, p);
      // Operators (and the local cluster's fault scenarios) find the current process here.
      writeFileSync(join(this.o.dir, `${name}.pid`), `${p.child.pid ?? ''}\n`);
      void p.exited.then((code) => {
        if (this.#stopping) return;
        this.o.logger.warn('service exited, restarting', { service: name, code });
        setTimeout(() => {
          if (!this.#stopping) launch();
        }, 1000).unref();
      });
      return p;
    };
    launch();
    return () => this.#procs.get(name)!;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    for (const name of ['joinservice', 'keyservice']) await this.#procs.get(name)?.stop();
    this.#procs.clear();
  }
}
