/**
 * The release build (docs/adr/0032): the CLI as a single executable, the Helm charts, the service
 * images as OCI archives, the bootstrapper bundle, and a manifest with every artifact's SHA-256.
 * Reproducible: bundles are built in one fixed folder of the checkout (their source maps name
 * paths relative to it), archives carry the commit's time (SOURCE_DATE_EPOCH) and sorted entries,
 * images buildah's `--timestamp 0`; two builds of one commit give the same hashes.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleApp, helmPath, REPO_ROOT } from '@asterism/deploy';
import { packageCharts } from './charts.js';
import { bundleCli, cliBuildFacts, type CliBuildFacts } from './cli-bundle.js';
import { buildReleaseImages } from './images.js';
import { artifact, writeManifest, type Artifact, type ReleaseManifest } from './manifest.js';
import { reproducibleTarGz } from './repro-tar.js';
import { buildSea } from './sea.js';

/** Options of {@link buildRelease}. */
export interface ReleaseOptions {
  /** The release folder (emptied first). */
  outDir: string;
  /** Checkout to build (default: this one). */
  root?: string;
  /** Build folder (default `<root>/dist/.release-work`). */
  workDir?: string;
  helm?: string;
  /** Only the CLI executable (no charts, images, bootstrapper). */
  cliOnly?: boolean;
  /** Single-executable cache (default ~/.cache/asterism/sea; `null`: always build). */
  seaCache?: string | null;
  /** Time stamps inside archives (default: SOURCE_DATE_EPOCH, else the commit's time). */
  epoch?: number;
  progress?: (line: string) => void;
}

/** The platform of the executable: the build machine's, which must be Linux x86-64. */
export const PLATFORM = 'linux/amd64';

/** SOURCE_DATE_EPOCH when set, else the commit time of HEAD. */
export function sourceDateEpoch(root: string): number {
  const raw = process.env.SOURCE_DATE_EPOCH ?? execFileSync('git', ['-C', root, 'log', '-1', '--format=%ct', 'HEAD'], { encoding: 'utf8' }).trim();
  if (!/^\d+$/.test(raw)) throw new Error(`invalid SOURCE_DATE_EPOCH "${raw}"`);
  return Number(raw);
}

interface Build {
  root: string;
  out: string;
  work: string;
  facts: CliBuildFacts;
  epoch: number;
  o: ReleaseOptions;
}

/** The executable, the ESM bundle for a machine with Node 20 (apps/cli's `bin`), and the third-party licence texts. */
async function cliStage(b: Build): Promise<Artifact[]> {
  const esm = await bundleCli(join(b.work, 'cli-esm'), 'esm', b.facts);
  const mjs = join(b.out, `asterism-${b.facts.version}.mjs`);
  await copyFile(esm.outfile, mjs);
  const bundle = await bundleCli(join(b.work, 'cli'), 'cjs', b.facts);
  const exe = join(b.out, `asterism-${b.facts.version}-linux-amd64`);
  const sea = await buildSea({ script: bundle.outfile, output: exe, ...(b.o.seaCache !== undefined ? { cacheDir: b.o.seaCache } : {}) });
  b.o.progress?.(`  ${exe}: ${(sea.bytes / 1048576).toFixed(1)} MiB, ${sea.cached ? 'cached' : 'built'} in ${(sea.ms / 1000).toFixed(1)} s`);
  await copyFile(`${bundle.outfile}.LEGAL.txt`, `${exe}.LEGAL.txt`);
  return [
    await artifact(b.out, exe, { kind: 'cli', name: 'asterism', platform: PLATFORM }),
    await artifact(b.out, mjs, { kind: 'cli-bundle', name: 'asterism', platform: 'node20' }),
    await artifact(b.out, `${exe}.LEGAL.txt`, { kind: 'cli-licenses', name: 'asterism' }),
  ];
}

async function chartStage(b: Build): Promise<Artifact[]> {
  const charts = await packageCharts({ helm: b.o.helm ?? helmPath(), chartsDir: join(b.root, 'deploy', 'charts'), outDir: join(b.out, 'charts'), epoch: b.epoch });
  return Promise.all(charts.map((c) => artifact(b.out, c.file, { kind: 'helm-chart', name: c.name, version: c.version, appVersion: c.appVersion })));
}

async function imageStage(b: Build): Promise<Artifact[]> {
  const images = await buildReleaseImages({ outDir: join(b.out, 'images'), workDir: b.work, epoch: b.epoch, ...(b.o.progress ? { progress: b.o.progress } : {}) });
  return Promise.all(images.map((i) => artifact(b.out, i.file, { kind: 'image', name: i.name, ref: i.ref, digest: i.digest, platform: PLATFORM })));
}

/** The bootstrapper bundle (main.mjs, source map, licences, health proto) as `bootstrapper/` in a tar.gz. */
async function bootstrapperStage(b: Build): Promise<Artifact[]> {
  const outRoot = join(b.work, 'bootstrapper-bundle');
  await rm(outRoot, { recursive: true, force: true });
  await bundleApp('bootstrapper', { outRoot, root: b.root });
  const file = join(b.out, `asterism-bootstrapper-${b.facts.version}.tar.gz`);
  await reproducibleTarGz(outRoot, ['bootstrapper'], file, b.epoch);
  return [await artifact(b.out, file, { kind: 'bootstrapper-bundle', name: 'bootstrapper', platform: 'node20' })];
}

/** Builds the release into `o.outDir`; returns the manifest it wrote. */
export async function buildRelease(o: ReleaseOptions): Promise<ReleaseManifest> {
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`the executable is built for ${PLATFORM} on ${PLATFORM} only (this is ${process.platform}/${process.arch})`);
  const root = o.root ?? REPO_ROOT;
  const b: Build = { root, out: o.outDir, work: o.workDir ?? join(root, 'dist', '.release-work'), facts: await cliBuildFacts(root), epoch: o.epoch ?? sourceDateEpoch(root), o };
  await rm(b.out, { recursive: true, force: true });
  await mkdir(b.out, { recursive: true });
  const say = (s: string) => o.progress?.(s);
  say(`asterism ${b.facts.version} at ${b.facts.commit}, SOURCE_DATE_EPOCH=${b.epoch}`);
  const stages: [string, (b: Build) => Promise<Artifact[]>][] = [['cli executable', cliStage]];
  if (!o.cliOnly) stages.push(['helm charts', chartStage], ['service images', imageStage], ['bootstrapper bundle', bootstrapperStage]);
  const artifacts: Artifact[] = [];
  for (const [name, stage] of stages) {
    const started = Date.now();
    artifacts.push(...(await stage(b)));
    say(`${name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return writeManifest(b.out, {
    name: 'asterism',
    version: b.facts.version,
    commit: b.facts.commit,
    sourceDateEpoch: b.epoch,
    node: process.version,
    kubernetesVersions: b.facts.kubernetesVersions,
    attestationVariants: b.facts.attestationVariants,
    artifacts,
  });
}
