/**
 * The simulated node runtime (docs/adr/0005-local-kubernetes-backend.md, docs/adr/0036-node-runtime.md):
 * no kubelet and no kubeadm. Node 0 runs a real control plane and the keyservice and joinservice as
 * children of its bootstrapper; the other nodes register with their kubelet certificates. The
 * bootstrapper stays resident where it supervises something (residency.ts): node 0's control
 * plane, or the node's verification service unless the verification-service program takes it over
 * (hand-over.ts).
 */
import { join } from 'node:path';
import type { Issuer } from '@asterism/attestation';
import { TcpReadinessProbe, type AfterBoot, type NodeRuntime, type NodeRuntimeContext, type ResidentAgent } from '@asterism/bootstrapper/runtime';
import { perCallIssuer } from '@asterism/verification-service';
import type { SimulatedFlags } from './flags.js';
import { handOverVerification } from './hand-over.js';
import { LocalClusterInitializer, LocalClusterJoiner } from './local-backend.js';
import { programCommand, type LocalPrograms } from './programs.js';
import { handsOverVerification, residencyReason, type ResidencyFacts } from './residency.js';
import { LocalServiceProcesses } from './services.js';
import { startVerificationService } from './verification.js';

/** Processes on this machine instead of kubeadm and a kubelet. */
export class SimulatedNodeRuntime implements NodeRuntime {
  readonly name = 'simulated';
  readonly initializer: LocalClusterInitializer;
  readonly joiner: LocalClusterJoiner;
  readonly keepsRecoveryServer = true;

  constructor(
    private readonly ctx: NodeRuntimeContext,
    private readonly sim: SimulatedFlags,
    private readonly programs?: LocalPrograms,
  ) {
    const { cfg, files, logger } = ctx;
    const binDir = cfg.k8sBinDir ?? '';
    this.initializer = new LocalClusterInitializer({
      binaries: { etcd: join(binDir, 'etcd'), kubeApiserver: join(binDir, 'kube-apiserver'), kubeControllerManager: join(binDir, 'kube-controller-manager') },
      dir: files.resolve('/etc/kubernetes'),
      services: new LocalServiceProcesses({
        dir: files.resolve('/var/lib/asterism/services'),
        variant: cfg.variant.name,
        attestationConfigPath: sim.joinAttestationConfig ?? '',
        keyServicePort: sim.keyServicePort,
        joinServicePort: sim.localJoinServicePort,
        // Any free port; the joinservice logs it ("joinservice serving", metricsPort).
        joinServiceMetricsPort: 0,
        keyServiceMetricsPort: 0,
        // The joinservice names and roles peers from the same metadata source (docs/adr/0008).
        metadata: cfg.metadata,
        ...(programs ? { programs } : {}),
        logger,
      }),
      logger,
      apiServerPort: sim.apiServerPort,
    });
    this.joiner = new LocalClusterJoiner(logger);
  }

  /** There is no kubelet: the node's Node object is registered at join. */
  startNodeAgent(): void {
    this.ctx.logger.info('node agent started', { kubelet: 'none (simulated node)' });
  }

  /** Stops node 0's control plane and services; the caller exits with EXIT_REBOOT for the cluster tool. */
  async reboot(): Promise<void> {
    await this.initializer.stop();
  }

  /** Stays for node 0's control plane or the verification service, else hands the latter over and exits. */
  async afterBoot(boot: AfterBoot): Promise<ResidentAgent | undefined> {
    const facts: ResidencyFacts = {
      result: boot.result,
      supervisesControlPlane: this.initializer.supervising,
      verificationPort: this.sim.verifyGrpcPort,
      verificationProgram: this.programs?.['verification-service'] !== undefined,
    };
    const stay = residencyReason(facts);
    if (stay) return this.#resident(stay, boot.issuer);
    await boot.releasePlatform();
    if (!handsOverVerification(facts)) return undefined;
    const { cfg, logger } = this.ctx;
    const handed = await handOverVerification({
      cfg: { ...cfg, verifyGrpcPort: this.sim.verifyGrpcPort, verifyHttpPort: this.sim.verifyHttpPort },
      command: programCommand('verification-service', this.programs),
      probe: new TcpReadinessProbe(),
      logger,
    });
    if (handed) return undefined;
    return this.#resident('verification service', perCallIssuer(cfg, (count) => logger.warn('flushed transient TPM objects left behind', { count })));
  }

  /** Serves the verification service (if on) with `issuer`; stopping also stops node 0's control plane. */
  async #resident(reason: string, issuer: Issuer): Promise<ResidentAgent> {
    const { cfg, logger } = this.ctx;
    const verification = await startVerificationService({ host: cfg.initHost, grpcPort: this.sim.verifyGrpcPort, httpPort: this.sim.verifyHttpPort }, issuer, logger);
    return {
      reason,
      stop: async () => {
        await verification?.close();
        await this.initializer.stop();
      },
    };
  }
}
