import { join, resolve } from 'node:path';

/** A simulated node of the local cluster. */
export interface NodeSpec {
  name: string;
  role: 'ControlPlane' | 'Worker';
  /** Its "VPC IP": a distinct loopback address, so every node can bind port 9000. */
  ip: string;
}

/** Where everything of one local cluster lives (git-ignored `.local-cluster/` by default). */
export class ClusterLayout {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  get stateFile(): string {
    return join(this.root, 'cluster.json');
  }
  get metadataFile(): string {
    return join(this.root, 'metadata.json');
  }
  get initSecretFile(): string {
    return join(this.root, 'init-secret');
  }
  get attestationConfigFile(): string {
    return join(this.root, 'attestation-config.json');
  }
  /** kubeadm backend with VM nodes: the image's predicted events the namespace nodes replay. */
  get bootEventsFile(): string {
    return join(this.root, 'boot-events.json');
  }
  get workspace(): string {
    return join(this.root, 'workspace');
  }
  get kubeconfig(): string {
    return join(this.workspace, 'asterism-admin.conf');
  }
  /** Local backend: the bundles the cluster's processes run from (`<program>/main.mjs`), built by `up`. */
  get programsDir(): string {
    return join(this.root, 'programs');
  }
  /** The bootstrappers' `--local-apps` file: bundle and Node flags of each program they start. */
  get programsFile(): string {
    return join(this.programsDir, 'programs.json');
  }
  /** kubeadm backend: the admin kubeconfig pointing at the host's loopback forward. */
  get hostKubeconfig(): string {
    return join(this.root, 'asterism-admin.host.conf');
  }
  nodeDir(name: string): string {
    return join(this.root, 'nodes', name);
  }
  nodeRoot(name: string): string {
    return join(this.nodeDir(name), 'root');
  }
  tpmDir(name: string): string {
    return join(this.nodeDir(name), 'tpm');
  }
  tpmSocket(name: string): string {
    return join(this.tpmDir(name), 'tpm.sock');
  }
  tpmCtrlSocket(name: string): string {
    return join(this.tpmDir(name), 'ctrl.sock');
  }
  diskImage(name: string): string {
    return join(this.nodeDir(name), 'state-disk.img');
  }
  diskKey(name: string): string {
    return join(this.nodeDir(name), 'state-disk.key');
  }
  log(name: string, what: string): string {
    return join(this.nodeDir(name), `${what}.log`);
  }
  /** Status file the bootstrapper writes under its state root. */
  nodeStatus(name: string): string {
    return join(this.nodeRoot(name), 'run', 'asterism', 'status.json');
  }
}

/** Node names and IPs: control-plane-<i> then worker-<i>, at `<base>.<10+n>`. */
export function planNodes(controlPlanes: number, workers: number, ipBase = '127.42.0'): NodeSpec[] {
  const nodes: NodeSpec[] = [];
  let n = 0;
  for (let i = 0; i < controlPlanes; i++) nodes.push({ name: `control-plane-${i}`, role: 'ControlPlane', ip: `${ipBase}.${10 + n++}` });
  for (let i = 0; i < workers; i++) nodes.push({ name: `worker-${i}`, role: 'Worker', ip: `${ipBase}.${10 + n++}` });
  return nodes;
}
