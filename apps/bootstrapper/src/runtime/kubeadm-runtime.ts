/**
 * The kubeadm runtime (docs/adr/0019-node-runtime.md): kubeadm creates or joins the cluster; the
 * kubelet and reboots belong to the init system: systemd on a VM image, or (`--init-system none`)
 * the node's supervisor, tools/local-cluster's node.sh. The cluster runs the services as pods,
 * the verification service included (docs/adr/0028), so the bootstrapper always exits after
 * bootstrapping.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ComponentInstaller, CtrImageStore } from '../components/index.js';
import { KubeadmBackend } from '../kubernetes/kubeadm/kubeadm-backend.js';
import type { AfterBoot, NodeRuntime, NodeRuntimeContext, ResidentAgent } from './node-runtime.js';

/**
 * Signal file for a node supervisor without systemd (`--init-system none`): like `systemctl enable
 * --now kubelet`, it allows the kubelet to start from a configuration kubeadm wrote in an earlier
 * boot, once this boot's disk key is in (docs/adr/0019-node-runtime.md).
 */
export const START_KUBELET_SIGNAL = '/run/asterism-start-kubelet';

/** kubeadm plus systemd or an external supervisor, by `--init-system`. */
export class KubeadmNodeRuntime implements NodeRuntime {
  readonly name: string;
  readonly initializer: KubeadmBackend;
  readonly joiner: KubeadmBackend;
  readonly keepsRecoveryServer = false;

  readonly #installer: ComponentInstaller;
  readonly #kubeadmPath: string;

  constructor(private readonly ctx: NodeRuntimeContext) {
    const { cfg, files, logger } = ctx;
    this.name = `kubeadm/${cfg.initSystem}`;
    this.#kubeadmPath = cfg.k8sBinDir ? join(cfg.k8sBinDir, 'kubeadm') : files.resolve('/run/state/bin/kubeadm');
    // Image components go into the node's containerd (namespace k8s.io), docs/protocol/components.md.
    this.#installer = new ComponentInstaller({ logger, resolve: (p) => files.resolve(p), images: new CtrImageStore({ address: files.resolve('/run/containerd/containerd.sock') }) });
    const kubeadm = new KubeadmBackend({
      kubeadm: this.#kubeadmPath,
      metadata: ctx.metadata,
      csp: cfg.csp,
      logger,
      files,
      ...(cfg.imageRepository ? { imageRepository: cfg.imageRepository } : {}),
      ignorePreflightErrors: cfg.ignorePreflightErrors,
      ...(cfg.kubeProxyConntrackMaxPerCore !== undefined ? { kubeProxyConntrackMaxPerCore: cfg.kubeProxyConntrackMaxPerCore } : {}),
      installer: this.#installer,
    });
    this.initializer = kubeadm;
    this.joiner = kubeadm;
  }

  /**
   * systemd: waits for `systemctl enable --now kubelet` to finish. The bootstrapper exits right
   * after a rejoin, and systemd then stops the rest of its service's cgroup: a VM worker's
   * systemctl was killed that way before it started the kubelet, and the node stayed NotReady.
   */
  async startNodeAgent(): Promise<void> {
    if (this.ctx.cfg.initSystem === 'systemd') {
      const code = await systemctl(['enable', '--now', 'kubelet']);
      if (code !== 0) this.ctx.logger.warn('systemctl enable --now kubelet failed', { exitCode: code });
    } else writeFileSync(START_KUBELET_SIGNAL, '');
    this.ctx.logger.info('node agent started', { kubelet: this.ctx.cfg.initSystem === 'systemd' ? 'kubelet.service' : 'started by the node supervisor' });
  }

  async reboot(): Promise<void> {
    if (this.ctx.cfg.initSystem !== 'systemd') return;
    // Wait until systemctl has queued the reboot: when this process exits, systemd stops the rest
    // of the service's cgroup, and on a TCG VM systemctl took longer than the exit delay to get there.
    await systemctl(['reboot']);
  }

  /**
   * Nothing to supervise here: the node keeps running without this process (idle memory), unless
   * it is the node's upgrade agent (`--upgrade-agent-port`, docs/adr/0042-upgrade-agent.md), which
   * opens the TPM per handshake and so releases it here too.
   */
  async afterBoot(boot: AfterBoot): Promise<ResidentAgent | undefined> {
    await boot.releasePlatform();
    if (this.ctx.cfg.upgradeAgentPort === 0) return undefined;
    const { startUpgradeAgent } = await import('../upgrade-agent/agent.js');
    const agent = await startUpgradeAgent({ cfg: this.ctx.cfg, logger: this.ctx.logger, resolve: (p) => this.ctx.files.resolve(p), installer: this.#installer, kubeadmPath: this.#kubeadmPath });
    return { reason: `upgrade agent on port ${agent.port}`, stop: agent.stop };
  }
}

/** The product's runtime factory (main.ts). */
export const kubeadmRuntime = (ctx: NodeRuntimeContext): NodeRuntime => new KubeadmNodeRuntime(ctx);

/** Runs systemctl to its end; its exit code (-1 when it could not be started). */
function systemctl(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('systemctl', args, { stdio: 'ignore' });
    child.on('exit', (code) => resolve(code ?? -1));
    child.on('error', () => resolve(-1));
  });
}
