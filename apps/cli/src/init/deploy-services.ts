/**
 * After a successful init, the cluster's services go in the way docs/protocol/helm.md describes:
 * the `join-config` ConfigMap (attestation config + measurement salt) first, then one Helm release
 * of the `asterism-services` chart (joinservice DaemonSet + keyservice with the master secret +
 * the verification-service DaemonSet on every node + the attestation monitor).
 * Secret values reach Helm only through a 0600 values file in a private temp folder that is
 * removed afterwards; they are never on a command line or in an error.
 */
import { runCommand } from '@asterism/child-process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { AsterismError } from '@asterism/errors';
import type { MasterSecret } from '@asterism/crypto';
import { stringify } from 'yaml';

/** Why deploying the services failed. */
export class ServicesDeployError extends AsterismError<'JOIN_CONFIG_FAILED' | 'HELM_FAILED'> {}

/** Namespace, release and ConfigMap names the charts expect (docs/protocol/helm.md). */
export const SERVICES = { namespace: 'kube-system', release: 'asterism', joinConfig: 'join-config' } as const;

/** Runs helm with arguments; resolves with its combined output, rejects with it on failure. */
export type HelmRunner = (args: string[]) => Promise<string>;

/** Everything one deployment needs. */
export interface ServicesDeployment {
  kubeconfigPath: string;
  masterSecret: MasterSecret;
  measurementSalt: Buffer;
  /** The attestation config JSON the joinservice enforces (the CLI's own, as the user gave it). */
  attestationConfigJson: string;
  variant: string;
  csp: string;
  /** Image prefix: `<prefix>/joinservice`, `<prefix>/keyservice`, `<prefix>/verification-service`, `<prefix>/attestation-monitor`. */
  imageRepository: string;
  /** Manifest digests by image name (the image overlay): the charts then name those images by digest. */
  imageDigests?: Readonly<Record<string, string>>;
  /** User values files, applied after the generated values (they win). */
  valuesFiles: string[];
  /** Skip `--wait --atomic` (debugging: the release stays even if pods never become ready). */
  skipWait: boolean;
  timeoutSeconds: number;
}

/** Options of {@link HelmServicesDeployer}. */
export interface HelmServicesDeployerOptions {
  /** The umbrella chart folder (its subcharts are `file://` dependencies next to it). */
  chartDir: string;
  helm: HelmRunner;
  progress: (line: string) => void;
  /** Writes join-config (default: through the API with the new admin kubeconfig). */
  writeJoinConfig?: (d: ServicesDeployment) => Promise<void>;
}

/** Deploys the services with Helm into the new cluster. */
export class HelmServicesDeployer {
  constructor(private readonly o: HelmServicesDeployerOptions) {}

  async deploy(d: ServicesDeployment): Promise<void> {
    this.o.progress('Writing the join-config ConfigMap (attestation config, measurement salt)...');
    await (this.o.writeJoinConfig ?? writeJoinConfig)(d).catch((err: unknown) => {
      throw new ServicesDeployError('JOIN_CONFIG_FAILED', `writing ConfigMap ${SERVICES.namespace}/${SERVICES.joinConfig}: ${(err as Error).message}`);
    });
    const work = await mkdtemp(join(tmpdir(), 'asterism-helm-'));
    try {
      const chart = await this.prepareChart(work);
      const values = join(work, 'values.yaml');
      await writeFile(values, stringify(generatedValues(d)), { mode: 0o600 });
      const wait = d.skipWait ? [] : ['--wait', '--atomic'];
      this.o.progress(`Installing the services with Helm (release ${SERVICES.release} in ${SERVICES.namespace}${d.skipWait ? ', not waiting' : ', waiting for the pods'})...`);
      await this.helm(['upgrade', '--install', SERVICES.release, chart, '--namespace', SERVICES.namespace, '--kubeconfig', d.kubeconfigPath, '-f', values, ...d.valuesFiles.flatMap((f) => ['-f', f]), ...wait, '--timeout', `${d.timeoutSeconds}s`]);
      this.o.progress('Services deployed.');
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** A copy of the charts with the umbrella chart's `file://` dependencies packaged. */
  private prepareChart(work: string): Promise<string> {
    return prepareChart(this.o.chartDir, work, (args) => this.helm(args));
  }

  private async helm(args: string[]): Promise<void> {
    try {
      await this.o.helm(args);
    } catch (err) {
      throw new ServicesDeployError('HELM_FAILED', `helm ${args[0]} failed: ${(err as Error).message}`);
    }
  }
}

/** Copies the charts of `chartDir`'s folder into `work` and builds the umbrella chart's `file://` dependencies; returns the chart's path. */
export async function prepareChart(chartDir: string, work: string, helm: (args: string[]) => Promise<unknown>): Promise<string> {
  const charts = join(work, 'charts');
  await cp(join(chartDir, '..'), charts, { recursive: true });
  const chart = join(charts, basename(chartDir));
  await helm(['dependency', 'build', chart]);
  return chart;
}

/** The chart values the CLI sets; the master secret and salt go only into the values file. */
export function generatedValues(d: ServicesDeployment): Record<string, unknown> {
  return {
    joinservice: { image: image(d, 'joinservice'), attestationVariant: d.variant, csp: d.csp },
    keyservice: { image: image(d, 'keyservice'), masterSecret: Buffer.from(d.masterSecret.key).toString('base64'), salt: Buffer.from(d.masterSecret.salt).toString('base64') },
    // Every node's verification service (`asterism verify --endpoint`): the chart's defaults name
    // the node's TPM (/dev/tpmrm0); a values file can point it elsewhere (tpm.kind/hostPath).
    verificationservice: { image: image(d, 'verification-service'), attestationVariant: d.variant },
    // Continuous attestation of every node (docs/protocol/continuous-attestation.md); it derives
    // the cluster ID through the keyservice, as the nodes do.
    attestationmonitor: { image: image(d, 'attestation-monitor'), attestationVariant: d.variant },
  };
}

/** A chart's `image` values: the repository, and the digest when the overlay gives one. */
function image(d: ServicesDeployment, name: string): { repository: string; digest?: string } {
  const digest = d.imageDigests?.[name];
  return { repository: `${d.imageRepository}/${name}`, ...(digest ? { digest } : {}) };
}

/** Creates or replaces `join-config`: `data.attestationConfig` and `binaryData.measurementSalt`. */
async function writeJoinConfig(d: ServicesDeployment): Promise<void> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(d.kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const body: k8s.V1ConfigMap = {
    metadata: { name: SERVICES.joinConfig, namespace: SERVICES.namespace },
    data: { attestationConfig: d.attestationConfigJson },
    binaryData: { measurementSalt: d.measurementSalt.toString('base64') },
  };
  try {
    await core.createNamespacedConfigMap({ namespace: SERVICES.namespace, body });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
    await core.replaceNamespacedConfigMap({ name: SERVICES.joinConfig, namespace: SERVICES.namespace, body });
  }
}

/** The real helm binary; output is kept for the error (helm never sees a secret on its command line). */
export function spawnHelm(binary: string, timeoutMs: number): HelmRunner {
  return async (args) => {
    let r;
    try {
      r = await runCommand(binary, args, { timeoutMs, stdoutLimit: 16_384, stderrLimit: 16_384, combinedLimit: 16_384 });
    } catch (err) {
      throw new Error(`cannot run ${binary}: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`, { cause: err });
    }
    if (r.code === 0) return r.output;
    throw new Error(`exit ${r.code}: ${r.output.trim().split('\n').slice(-6).join(' | ')}`);
  };
}
