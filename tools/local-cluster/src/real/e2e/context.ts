/**
 * What the scenarios of the real-node end-to-end suite (real-cluster.int.spec.ts) share: the
 * cluster's folder, kubectl and API clients on the host forward, the cluster's KMS (to derive the
 * disk keys a node must end up with), node status files, LUKS checks and pod metrics.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { ClusterKms, STATE_DISK_KEY_LENGTH, stateDiskKeyId } from '@asterism/crypto';
import { eventually, kubectlBinary } from '@asterism/testing';
import { ClusterLayout } from '../../layout.js';

/** A node's status file (apps/bootstrapper/src/status-file.ts), the fields the suite reads. */
export interface StatusFile {
  phase: string;
  pcr15?: string;
  bootstrapMs?: number;
  joinServiceReachableAt?: string;
}

/** The running real cluster as the suite sees it (clients are made once `up` wrote the kubeconfig). */
export class RealClusterContext {
  readonly layout: ClusterLayout;
  #kc: k8s.KubeConfig | undefined;

  constructor(
    readonly root: string,
    readonly log: (line: string) => void,
  ) {
    this.layout = new ClusterLayout(root);
  }

  get kc(): k8s.KubeConfig {
    if (!this.#kc) {
      this.#kc = new k8s.KubeConfig();
      this.#kc.loadFromFile(this.layout.hostKubeconfig);
    }
    return this.#kc;
  }

  get core(): k8s.CoreV1Api {
    return this.kc.makeApiClient(k8s.CoreV1Api);
  }

  /**
   * kubectl on the host forward; throws with kubectl's stderr on failure. Output up to 64 MiB: the
   * services' logs after an upgrade (several pods per label, Helm-restarted) passed the 1 MiB default.
   */
  kubectl(...args: string[]): string {
    return execFileSync(kubectlBinary(), ['--kubeconfig', this.layout.hostKubeconfig, '--request-timeout=20s', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  }

  masterSecret(): { key: Buffer; salt: Buffer } {
    const m = JSON.parse(readFileSync(join(this.layout.workspace, 'asterism-mastersecret.json'), 'utf8')) as { key: string; salt: string };
    return { key: Buffer.from(m.key, 'base64'), salt: Buffer.from(m.salt, 'base64') };
  }

  kms(): ClusterKms {
    return new ClusterKms(this.masterSecret());
  }

  /** The key the joinservice hands a node for its state disk (derived from the master secret). */
  diskKey(node: string): Buffer {
    const uuid = execFileSync('cryptsetup', ['luksUUID', this.layout.diskImage(node)], { encoding: 'utf8' }).trim().toLowerCase();
    return this.kms().getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH);
  }

  /** Whether `key` opens the node's LUKS header (keyslot check only: there is no device-mapper). */
  opensDisk(node: string, key: Buffer): boolean {
    return spawnSync('cryptsetup', ['open', '--test-passphrase', '--key-file=-', this.layout.diskImage(node)], { input: key }).status === 0;
  }

  /** The key `up` put on the node's disk before its first boot. */
  initialDiskKey(node: string): Buffer {
    return readFileSync(this.layout.diskKey(node));
  }

  status(node: string): StatusFile | undefined {
    return existsSync(this.layout.nodeStatus(node)) ? (JSON.parse(readFileSync(this.layout.nodeStatus(node), 'utf8')) as StatusFile) : undefined;
  }

  /** The bootstrapper's JSON log lines of a node. */
  bootstrapperLog(node: string): Array<Record<string, unknown>> {
    const path = this.layout.log(node, 'bootstrapper.json');
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  async ready(node: string): Promise<k8s.V1NodeCondition | undefined> {
    const n = await this.core.readNode({ name: node }).catch(() => undefined);
    const c = n?.status?.conditions?.find((x) => x.type === 'Ready');
    return c?.status === 'True' ? c : undefined;
  }

  /** Waits for the node's bootstrapper to report `joined` and its kubelet to report Ready. */
  async waitJoinedAndReady(node: string): Promise<void> {
    const started = Date.now();
    await eventually(`${node} joined`, async () => (this.status(node)?.phase === 'joined' ? true : undefined), 120_000);
    await eventually(`${node} Ready`, async () => ((await this.ready(node)) ? true : undefined), 90_000);
    this.log(`${node}: joined and Ready ${((Date.now() - started) / 1000).toFixed(1)} s after the wait began`);
  }

  /** Names and nodes of the pods with `selector` in kube-system. */
  async pods(selector: string): Promise<Array<{ name: string; node: string; ready: boolean }>> {
    const items = (await this.core.listNamespacedPod({ namespace: 'kube-system', labelSelector: selector })).items;
    return items.map((p) => ({ name: p.metadata!.name!, node: p.spec?.nodeName ?? '', ready: p.status?.containerStatuses?.every((c) => c.ready) ?? false }));
  }

  /** A pod's Prometheus text through the API server's pod proxy ('' while the pod refuses). */
  podMetrics(pod: string, port: number): string {
    try {
      return this.kubectl('get', '--raw', `/api/v1/namespaces/kube-system/pods/${pod}:${port}/proxy/metrics`);
    } catch {
      return '';
    }
  }

  /** kubectl rollout status of a kube-system DaemonSet (throws when it does not finish in time). */
  rolledOut(daemonSet: string, timeout = '120s'): void {
    this.kubectl('-n', 'kube-system', 'rollout', 'status', `daemonset/${daemonSet}`, `--timeout=${timeout}`);
  }
}

/** The value of one Prometheus sample (`name{labels} value`), 0 when the series is absent. */
export function sampleValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
