/** Which Kubernetes backend a node runs, built from the bootstrapper's flags. */
import { join } from 'node:path';
import type { Logger } from '@asterism/logger';
import type { MetadataProvider } from '@asterism/metadata';
import type { BootstrapperConfig } from '../flags.js';
import type { ClusterInitializer } from '../initserver/ports.js';
import type { ClusterJoiner } from '../joinclient/ports.js';
import type { NodeFileWriter } from '../state/file-writer.js';
import { ComponentInstaller } from '../components/index.js';
import { KubeadmBackend } from './kubeadm/kubeadm-backend.js';
import { LocalClusterInitializer, LocalClusterJoiner } from './local/local-backend.js';
import type { LocalPrograms } from './local/programs.js';
import { LocalServiceProcesses } from './local/services.js';

/** The Kubernetes backend's two halves; `local` is set when this process also supervises a local control plane. */
export interface ClusterBackend {
  initializer: ClusterInitializer;
  joiner: ClusterJoiner;
  local?: LocalClusterInitializer;
}

/** The `local` backend (processes on this machine) or `kubeadm` (a real node). */
export function clusterBackendFor(cfg: BootstrapperConfig, metadata: MetadataProvider, files: NodeFileWriter, logger: Logger, programs?: LocalPrograms): ClusterBackend {
  if (cfg.backend === 'local') {
    const binDir = cfg.k8sBinDir ?? '';
    const local = new LocalClusterInitializer({
      binaries: { etcd: join(binDir, 'etcd'), kubeApiserver: join(binDir, 'kube-apiserver'), kubeControllerManager: join(binDir, 'kube-controller-manager') },
      dir: files.resolve('/etc/kubernetes'),
      services: new LocalServiceProcesses({
        dir: files.resolve('/var/lib/asterism/services'),
        variant: cfg.variant.name,
        attestationConfigPath: cfg.joinAttestationConfig ?? '',
        keyServicePort: cfg.keyServicePort,
        joinServicePort: cfg.localJoinServicePort,
        // Any free port; the joinservice logs it ("joinservice serving", metricsPort).
        joinServiceMetricsPort: 0,
        keyServiceMetricsPort: 0,
        // The joinservice names and roles peers from the same metadata source (docs/adr/0008).
        metadata: cfg.metadata,
        ...(programs ? { programs } : {}),
        logger,
      }),
      logger,
      apiServerPort: cfg.apiServerPort,
    });
    return { initializer: local, joiner: new LocalClusterJoiner(logger), local };
  }
  const kubeadm = new KubeadmBackend({
    kubeadm: cfg.k8sBinDir ? join(cfg.k8sBinDir, 'kubeadm') : files.resolve('/run/state/bin/kubeadm'),
    metadata,
    csp: cfg.csp,
    logger,
    files,
    ...(cfg.imageRepository ? { imageRepository: cfg.imageRepository } : {}),
    ignorePreflightErrors: cfg.ignorePreflightErrors,
    ...(cfg.kubeProxyConntrackMaxPerCore !== undefined ? { kubeProxyConntrackMaxPerCore: cfg.kubeProxyConntrackMaxPerCore } : {}),
    installer: new ComponentInstaller({ logger, resolve: (p) => files.resolve(p) }),
  });
  return { initializer: kubeadm, joiner: kubeadm };
}
