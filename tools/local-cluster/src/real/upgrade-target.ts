/**
 * What `asterism upgrade apply` needs from the local real-node cluster (docs/protocol/upgrade.md):
 * the target version's artifacts and Kubernetes images on the artifact server, and the real CLI
 * run from the router namespace (where the nodes' addresses and agents are reachable) with the
 * cluster's admin kubeconfig and attestation config.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildLocalImages, DEFAULT_IMAGE_DIR, helmPath } from '@asterism/deploy';
import { artifactsRoot, binDir, K8S_VERSION, publishImages } from '@asterism/k8s-testenv';
import { TSX, WORKSPACE_ROOT } from '../cluster.js';
import type { ClusterLayout } from '../layout.js';
import { artifactBaseUrl, imageDifferences, prepareArtifacts } from './artifacts.js';
import { NETWORK } from './network.js';

/** Packs (when needed) and publishes `version`'s files and Kubernetes images for the nodes. */
export async function publishUpgradeTarget(version: string, say: (l: string) => void): Promise<void> {
  const k8sBinDir = await prepareArtifacts(version, binDir(), say);
  const images = await buildLocalImages({ k8sBinDir, kubernetesVersion: version, ...(version === K8S_VERSION ? {} : { outDir: join(DEFAULT_IMAGE_DIR, version) }), progress: (l) => say(`  ${l}`) });
  const diffs = imageDifferences(version, images.images);
  if (diffs.length > 0) throw new Error(`the images built here do not match libs/versions: ${diffs.join('; ')}`);
  await publishImages(artifactsRoot(), version, images.images);
}

/** How one CLI run ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runUpgradeCli}. */
export interface UpgradeCliOptions {
  /** Extra arguments after `upgrade <action>`. */
  args?: string[];
  /** Each stdout line as it arrives (progress per node). */
  onLine?: (line: string) => void;
  /** Kill the CLI (SIGKILL) when a stdout line matches (the interrupted-rollout scenario). */
  killWhen?: RegExp;
}

/** `asterism upgrade <action> --kubernetes-version <v>` as a user runs it, from the router namespace. */
export function runUpgradeCli(layout: ClusterLayout, action: 'plan' | 'apply', version: string, o: UpgradeCliOptions = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const args = [
      `--net=/run/netns/${NETWORK.routerNamespace}`, process.execPath, '--import', TSX, join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), 'upgrade', action,
      `--kubernetes-version=${version}`, `--kubeconfig=${layout.kubeconfig}`, `--workspace=${layout.workspace}`,
      ...(action === 'apply' ? ['--variant=qemu-vtpm', `--attestation-config=${layout.attestationConfigFile}`, `--artifact-base-url=${artifactBaseUrl()}`, `--helm=${helmPath()}`] : []),
      ...(o.args ?? []),
    ];
    const child = spawn('nsenter', args, { cwd: WORKSPACE_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const lines = (partial + d).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) {
        o.onLine?.(l);
        if (o.killWhen?.test(l)) child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
