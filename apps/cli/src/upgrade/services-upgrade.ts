/**
 * The services after the last node (docs/protocol/upgrade.md "Services"): `helm upgrade` of the
 * `asterism` release with its values kept (`--reuse-values`), waiting for the pods. The
 * services' images are this build's (the image overlay), not a version row's, so they do not
 * change between rows; the release is upgraded anyway (the chart may have changed), and the
 * terminal says so.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareChart, SERVICES, type HelmRunner } from '../init/deploy-services.js';

/** Options of {@link upgradeServices}. */
export interface ServicesUpgradeOptions {
  helm: HelmRunner;
  chartDir: string;
  kubeconfigPath: string;
  wait: boolean;
  timeoutSeconds: number;
}

/** Runs the Helm upgrade; resolves with the line the terminal shows. */
export async function upgradeServices(o: ServicesUpgradeOptions, from: string, to: string): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'asterism-helm-'));
  try {
    const chart = await prepareChart(o.chartDir, work, o.helm);
    const wait = o.wait ? ['--wait'] : [];
    await o.helm(['upgrade', SERVICES.release, chart, '--namespace', SERVICES.namespace, '--kubeconfig', o.kubeconfigPath, '--reuse-values', ...wait, '--timeout', `${o.timeoutSeconds}s`]);
    return `services: the images of joinservice, keyservice, verification-service and attestation-monitor are this build's and do not change from ${from} to ${to}; Helm release ${SERVICES.release} upgraded anyway${o.wait ? ' (pods ready)' : ''}`;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
