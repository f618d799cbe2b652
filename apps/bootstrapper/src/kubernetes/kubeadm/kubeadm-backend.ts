import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { k8sCompliantHostname } from '@asterism/k8s';
import type { Logger } from '@asterism/logger';
import type { MetadataProvider } from '@asterism/metadata';
import type { ClusterInitializer, InitClusterRequest } from '../../initserver/ports.js';
import type { ClusterJoiner, JoinClusterRequest } from '../../joinclient/ports.js';
import { cloudProviderFlag, initConfiguration, joinConfiguration } from './configs.js';

/** Runs a program and returns its stdout; rejects with stderr's tail on a non-zero exit. */
export type CommandRunner = (binary: string, args: string[], signal?: AbortSignal) => Promise<string>;

/** The default runner: spawn, collect output, fail with the last lines of stderr. */
export const spawnRunner: CommandRunner = (binary, args, signal) =>
  new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8192)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${binary} ${args.join(' ')} exited ${code}: ${err.trim().split('\n').slice(-5).join(' | ')}`))));
  });

/**
 * The `kubeadm` Kubernetes backend (SPEC.md §8.5): writes the reference's kubeadm configuration to
 * a temporary file and runs the reference's kubeadm phases. Needs a container runtime and a
 * kubelet on the node, so on this machine only the generated configurations are checked (with
 * the real kubeadm's `config validate`); the local backend is what runs here.
 */
export class KubeadmBackend implements ClusterInitializer, ClusterJoiner {
  constructor(
    private readonly o: {
      kubeadm: string;
      metadata: MetadataProvider;
      csp: string;
      logger: Logger;
      run?: CommandRunner;
    },
  ) {}

  private get run(): CommandRunner {
    return this.o.run ?? spawnRunner;
  }

  /** The InitConfiguration documents for this node (exposed for validation). */
  async initConfig(req: InitClusterRequest): Promise<string> {
    const self = await this.o.metadata.self();
    const lb = await this.o.metadata.getLoadBalancerEndpoint();
    return initConfiguration({
      kubernetesVersion: req.kubernetesVersion,
      clusterName: req.clusterName,
      nodeName: k8sCompliantHostname(self.Name),
      nodeIp: self.VPCIP,
      providerId: self.ProviderID,
      controlPlaneHost: lb.host,
      certSans: req.apiServerCertSans,
      serviceCidr: req.serviceCidr,
      cloudProvider: cloudProviderFlag(this.o.csp, 'init'),
    });
  }

  /** The JoinConfiguration for a ticket (exposed for validation). */
  async joinConfig(req: JoinClusterRequest): Promise<string> {
    const self = await this.o.metadata.self();
    const lb = await this.o.metadata.getLoadBalancerEndpoint();
    return joinConfiguration({
      // The reference overrides the ticket's endpoint with the load balancer.
      apiServerEndpoint: lb.host ? `${lb.host}:${lb.port}` : req.apiServerEndpoint,
      token: req.token,
      caCertHashes: req.caCertHashes,
      nodeName: k8sCompliantHostname(self.Name),
      nodeIp: self.VPCIP,
      providerId: self.ProviderID,
      controlPlane: req.role === 'ControlPlane',
      cloudProvider: cloudProviderFlag(this.o.csp, 'join'),
    });
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

  async initCluster(req: InitClusterRequest, signal?: AbortSignal): Promise<Buffer> {
    const yaml = await this.initConfig(req);
    return this.withConfig(yaml, async (config) => {
      const k = (args: string[]) => {
        this.o.logger.info('running kubeadm', { args: args.join(' ') });
        return this.run(this.o.kubeadm, args, signal);
      };
      await k(['init', 'phase', 'preflight', '-v=5', `--config=${config}`]);
      await k(['init', 'phase', 'certs', 'all', '-v=5', `--config=${config}`]);
      const skip = ['preflight', 'certs', 'addon/coredns', ...(req.conformanceMode ? [] : ['addon/kube-proxy'])];
      await k(['init', '-v=5', `--config=${config}`, `--skip-phases=${skip.join(',')}`]);
      const kubeconfig = await k(['kubeconfig', 'user', `--client-name=${req.clusterName}-admin`, `--config=${config}`, '--org=system:masters']);
      return Buffer.from(kubeconfig);
    });
  }

  async joinCluster(req: JoinClusterRequest, signal?: AbortSignal): Promise<void> {
    const yaml = await this.joinConfig(req);
    await this.withConfig(yaml, async (config) => {
      const args = ['join', '-v=5', `--config=${config}`, ...(req.role === 'ControlPlane' ? ['--skip-phases=control-plane-prepare/download-certs'] : [])];
      this.o.logger.info('running kubeadm', { args: args.join(' ') });
      await this.run(this.o.kubeadm, args, signal);
    });
  }
}
