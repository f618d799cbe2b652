import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCommand } from '@asterism/child-process';
import { k8sCompliantHostname } from '@asterism/k8s/node-name';
import type { Logger } from '@asterism/logger';
import type { MetadataProvider } from '@asterism/metadata';
import type { components } from '@asterism/proto';
import { componentsForRole } from '@asterism/versions';
import type { ClusterInitializer, InitClusterRequest } from '../../initserver/ports.js';
import type { ClusterJoiner, JoinClusterRequest } from '../../joinclient/ports.js';
import type { NodeFileWriter } from '../../state/file-writer.js';
import { timedStage } from '../../stage-timer.js';
import { AUDIT_POLICY } from './audit-policy.js';
import type { ClusterObjectsWriter } from './cluster-api.js';
import { cloudProviderFlag, initConfiguration, joinConfiguration, KUBEADM } from './configs.js';
import { issueOwnKubeletCertificate } from './own-kubelet-cert.js';

/**
 * Runs a program and returns its stdout; rejects with stderr's tail on a non-zero exit. `onLine`,
 * when given, sees each complete stdout line as it arrives (kubeadm's phase progress).
 */
export type CommandRunner = (binary: string, args: string[], signal?: AbortSignal, onLine?: (line: string) => void) => Promise<string>;

/** The default runner (runCommand of @asterism/child-process): collect output, fail with kubeadm's error lines. */
export const spawnRunner: CommandRunner = async (binary, args, signal, onLine) => {
  const r = await runCommand(binary, args, { ...(signal ? { signal } : {}), ...(onLine ? { onStdoutLine: onLine } : {}) });
  if (r.code !== 0) throw new Error(`${binary} ${args.join(' ')} exited ${r.code}: ${failureSummary(r.stderr)}`);
  return r.stdout;
};

/**
 * The lines of kubeadm's stderr that say what failed: its `[ERROR ...]` preflight lines and the
 * `error execution phase` line; else the last lines (with -v=5 kubeadm ends with a stack trace).
 */
export function failureSummary(stderr: string): string {
  const lines = stderr.trim().split('\n');
  const errors = lines.filter((l) => /\[ERROR |error execution phase|^error:|^\s*\[preflight\].*error/i.test(l)).map((l) => l.trim());
  return (errors.length > 0 ? errors.slice(0, 12) : lines.slice(-5)).join(' | ');
}

/** Options of {@link KubeadmBackend}. */
export interface KubeadmBackendOptions {
  kubeadm: string;
  /** The load balancer endpoint (the node's own identity comes with each request). */
  metadata: Pick<MetadataProvider, 'getLoadBalancerEndpoint'>;
  csp: string;
  logger: Logger;
  /** Node paths (`/etc/kubernetes/...`, kubelet files); tests re-base them. */
  files: NodeFileWriter;
  /** Writes what init leaves in the cluster (default: the Kubernetes API with admin.conf). */
  clusterObjects?: ClusterObjectsWriter;
  run?: CommandRunner;
  /** kubeadm `imageRepository` (empty = kubeadm's default registry). */
  imageRepository?: string;
  /** Preflight checks kubeadm reports as warnings (for nodes that are containers, not VMs). */
  ignorePreflightErrors?: string[];
  /** kube-proxy `conntrack.maxPerCore` (0 = keep the kernel's limit; for nodes in a network namespace). */
  kubeProxyConntrackMaxPerCore?: number;
  /** Waits for the API server after kubeadm (default: lists namespaces with admin.conf). */
  apiReadiness?: ApiReadinessProbe;
  /** How long init waits for the API server after kubeadm (default 2 min, as the reference). */
  apiWaitMs?: number;
  /** Installs the request's/ticket's components first; without one, components are only logged (the image must carry them). */
  installer?: ComponentsInstaller;
}

/**
 * Installs the components of an init request or a join ticket before kubeadm runs: fetches,
 * checks every hash, then installs (docs/protocol/components.md). Consumer-declared port.
 */
export interface ComponentsInstaller {
  install(list: readonly components.Component[], signal?: AbortSignal): Promise<unknown>;
}

/** Blocks until the new cluster's API server answers (consumer-declared port). */
export interface ApiReadinessProbe {
  wait(timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The `kubeadm` Kubernetes backend (docs/protocol/kubernetes.md): on init it writes the audit policy,
 * runs kubeadm's preflight and certificate phases, issues the node's own kubelet certificate from
 * the fresh CA, runs `kubeadm init` for the remaining phases, then waits for the API server and
 * writes the cluster objects (CRDs, components ConfigMap, NodeVersion, internal-config, node
 * annotation). On join it writes the audit policy and runs `kubeadm join`. The kubelet itself is
 * the node's: systemd, or the local node runtime, starts it once kubeadm wrote its configuration.
 */
export class KubeadmBackend implements ClusterInitializer, ClusterJoiner {
  constructor(private readonly o: KubeadmBackendOptions) {}

  private get run(): CommandRunner {
    return this.o.run ?? spawnRunner;
  }

  /** The InitConfiguration documents for this node (exposed for validation). */
  async initConfig(req: InitClusterRequest): Promise<string> {
    const lb = await this.o.metadata.getLoadBalancerEndpoint();
    return initConfiguration({
      kubernetesVersion: req.kubernetesVersion,
      clusterName: req.clusterName,
      nodeName: req.node.name,
      nodeIp: req.node.ip,
      providerId: req.node.providerId,
      controlPlaneHost: lb.host,
      certSans: req.apiServerCertSans,
      serviceCidr: req.serviceCidr,
      cloudProvider: cloudProviderFlag(this.o.csp, 'init'),
      ...(this.o.imageRepository ? { imageRepository: this.o.imageRepository } : {}),
      ...(this.o.ignorePreflightErrors?.length ? { ignorePreflightErrors: this.o.ignorePreflightErrors } : {}),
      ...(this.o.kubeProxyConntrackMaxPerCore !== undefined ? { kubeProxyConntrackMaxPerCore: this.o.kubeProxyConntrackMaxPerCore } : {}),
    });
  }

  /** The JoinConfiguration for a ticket (exposed for validation). */
  async joinConfig(req: JoinClusterRequest): Promise<string> {
    const lb = await this.o.metadata.getLoadBalancerEndpoint();
    return joinConfiguration({
      // The reference overrides the ticket's endpoint with the load balancer.
      apiServerEndpoint: lb.host ? `${lb.host}:${lb.port}` : req.apiServerEndpoint,
      token: req.token,
      caCertHashes: req.caCertHashes,
      nodeName: k8sCompliantHostname(req.nodeName),
      nodeIp: req.nodeIp,
      providerId: req.providerId,
      controlPlane: req.role === 'ControlPlane',
      cloudProvider: cloudProviderFlag(this.o.csp, 'join'),
      ...(this.o.ignorePreflightErrors?.length ? { ignorePreflightErrors: this.o.ignorePreflightErrors } : {}),
    });
  }

  async initCluster(req: InitClusterRequest, signal?: AbortSignal): Promise<Buffer> {
    const stage = <T>(name: string, fn: () => Promise<T>) => timedStage(this.o.logger, 'kubeadm init step finished', name, fn);
    const { name: nodeName, ip: nodeIp } = req.node;
    await stage('installing components', () => this.installComponents(req.components, this.o.logger, signal));
    const yaml = await this.initConfig(req);
    return this.withConfig(yaml, async (config) => {
      const kubeadm = (args: string[]) => this.kubeadm(args, signal);
      await stage('writing audit policy', () => this.writeAuditPolicy());
      await stage('kubeadm preflight', () => kubeadm(['init', 'phase', 'preflight', '-v=5', `--config=${config}`]));
      await stage('kubeadm certificates', () => kubeadm(['init', 'phase', 'certs', 'all', '-v=5', `--config=${config}`]));
      await stage('own kubelet certificate', () => issueOwnKubeletCertificate(this.o.files, nodeName, nodeIp ? [nodeIp] : []));
      await stage('recreating manifests folder', () => this.recreateManifests());
      const skip = ['preflight', 'certs', 'addon/coredns', ...(req.conformanceMode ? [] : ['addon/kube-proxy'])];
      await stage('kubeadm init', () => kubeadm(['init', '-v=5', `--config=${config}`, `--skip-phases=${skip.join(',')}`]));
      const kubeconfig = await stage('admin kubeconfig', () => kubeadm(['kubeconfig', 'user', `--client-name=${req.clusterName}-admin`, `--config=${config}`, '--org=system:masters']));
      const adminConf = this.o.files.resolve('/etc/kubernetes/admin.conf');
      // The Kubernetes client is loaded only here, on the one node that inits (docs/protocol/node-image.md "Boot time").
      const api = await import('./cluster-api.js');
      await stage('waiting for the API server', () => (this.o.apiReadiness ?? new api.ApiServerReadiness(adminConf)).wait(this.o.apiWaitMs ?? 120_000, signal));
      const objects = this.o.clusterObjects ?? api.apiClusterObjects(adminConf);
      await stage('writing cluster objects', () => objects.write({ nodeName, components: req.components, kubernetesVersion: req.kubernetesVersion }));
      this.o.logger.warn('etcd I/O priority is left at the default (the reference raises it with ioprio_set; not done by this build)');
      return Buffer.from(kubeconfig);
    });
  }

  async joinCluster(req: JoinClusterRequest, signal?: AbortSignal): Promise<void> {
    const log = req.joinId ? this.o.logger.child({ joinId: req.joinId }) : this.o.logger;
    const stage = <T>(name: string, fn: () => Promise<T>) => timedStage(log, 'kubeadm join step finished', name, fn);
    // A worker leaves out the control plane's images (libs/versions node-roles.ts).
    const list = componentsForRole(req.components, req.role === 'ControlPlane' ? 'ControlPlane' : 'Worker');
    await stage('installing components', () => this.installComponents(list, log, signal));
    const yaml = await this.joinConfig(req);
    await this.withConfig(yaml, async (config) => {
      await stage('writing audit policy', () => this.writeAuditPolicy());
      await stage('recreating manifests folder', () => this.recreateManifests());
      const args = ['join', '-v=5', `--config=${config}`, ...(req.role === 'ControlPlane' ? ['--skip-phases=control-plane-prepare/download-certs'] : [])];
      await stage('kubeadm join', () => this.kubeadm(args, signal, phaseProgress(log, 'kubeadm join progress'), log));
    });
  }

  /** The components before anything of them runs; a bad artifact fails init/join with nothing installed. */
  private async installComponents(list: readonly components.Component[], log: Logger, signal?: AbortSignal): Promise<void> {
    if (list.length === 0) return;
    if (!this.o.installer) {
      log.warn('Kubernetes components are not installed: no installer configured; the node image must carry them', { count: list.length });
      return;
    }
    await this.o.installer.install(list, signal);
  }

  private kubeadm(args: string[], signal?: AbortSignal, onLine?: (line: string) => void, log: Logger = this.o.logger): Promise<string> {
    log.info('running kubeadm', { args: args.join(' ') });
    return this.run(this.o.kubeadm, args, signal, onLine);
  }

  /**
   * The audit policy, and the patches folder the configuration names: kubeadm refuses a missing
   * one. The reference's folder exists because its components put patches there; a node image
   * whose components carry none (or whose /opt is a fresh state disk) has no such folder yet.
   */
  private async writeAuditPolicy(): Promise<void> {
    const path = this.o.files.resolve(KUBEADM.auditPolicy);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, AUDIT_POLICY, { mode: 0o600 });
    await mkdir(this.o.files.resolve(KUBEADM.patchesDir), { recursive: true, mode: 0o755 });
  }

  private async recreateManifests(): Promise<void> {
    const dir = this.o.files.resolve(KUBEADM.manifests);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o755 });
  }

  private async withConfig<T>(yaml: string, fn: (path: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(join(tmpdir(), 'kubeadm-'));
    const path = join(dir, 'kubeadm.yaml');
    try {
      await writeFile(path, yaml, { mode: 0o600 });
      return await fn(path);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** A bootstrap token (`<id>.<secret>`) anywhere in a line. */
const BOOTSTRAP_TOKEN = /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/g;

/**
 * Logs kubeadm's `[phase] text` stdout lines with the milliseconds since the command started, so
 * the log shows where a join spends its time (docs/adr/0019-node-runtime.md); anything shaped like a
 * bootstrap token is replaced before logging.
 */
export function phaseProgress(logger: Logger, event: string): (line: string) => void {
  const started = performance.now();
  return (line) => {
    const m = /^\[([a-z-]+)\] (.+)$/.exec(line.trim());
    if (m) logger.info(event, { phase: m[1], line: m[2]!.replace(BOOTSTRAP_TOKEN, '<token>'), atMs: Math.round(performance.now() - started) });
  };
}
