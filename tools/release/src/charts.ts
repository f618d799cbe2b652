/**
 * The Helm charts as release archives: `helm package` of each chart in deploy/charts (the umbrella
 * after `helm dependency build`, on a copy so the checkout is not touched), each archive then
 * re-packed reproducibly (helm stamps the packaging time into every entry).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { extractTar, reproducibleTarGz } from './repro-tar.js';

const run = promisify(execFile);

/** One packaged chart. */
export interface PackagedChart {
  name: string;
  version: string;
  appVersion: string;
  /** The archive (`<name>-<version>.tgz`). */
  file: string;
}

/** Options of {@link packageCharts}. */
export interface PackageChartsOptions {
  helm: string;
  /** deploy/charts: every folder with a Chart.yaml is packaged. */
  chartsDir: string;
  outDir: string;
  epoch: number;
}

/** `name`, `version` and `appVersion` of a Chart.yaml (top-level scalar keys). */
export function chartMeta(chartYaml: string): { name: string; version: string; appVersion: string } {
  const get = (key: string) => new RegExp(`^${key}:\\s*["']?([^"'\\s#]+)`, 'm').exec(chartYaml)?.[1];
  const name = get('name');
  const version = get('version');
  if (!name || !version) throw new Error('Chart.yaml without name or version');
  return { name, version, appVersion: get('appVersion') ?? '' };
}

/** Re-packs a helm archive reproducibly in place (its top folder is the chart's name). */
async function repack(archive: string, epoch: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'asterism-chart-'));
  try {
    await extractTar(archive, dir);
    await reproducibleTarGz(dir, await readdir(dir), archive, epoch);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function helmPackage(helm: string, chartDir: string, outDir: string, epoch: number): Promise<PackagedChart> {
  const meta = chartMeta(await readFile(join(chartDir, 'Chart.yaml'), 'utf8'));
  await run(helm, ['package', chartDir, '--destination', outDir]);
  const file = join(outDir, `${meta.name}-${meta.version}.tgz`);
  await repack(file, epoch);
  return { ...meta, file };
}

/** Packages every chart; helm stores the umbrella's subcharts unpacked in its `charts/`, re-packed with the rest. */
export async function packageCharts(o: PackageChartsOptions): Promise<PackagedChart[]> {
  const work = await mkdtemp(join(tmpdir(), 'asterism-charts-'));
  try {
    await cp(o.chartsDir, work, { recursive: true });
    const all = (await readdir(work, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(work, d.name));
    const charts: string[] = [];
    for (const c of all) if ((await readdir(c)).includes('Chart.yaml')) charts.push(c);
    const isUmbrella = async (c: string) => /^dependencies:/m.test(await readFile(join(c, 'Chart.yaml'), 'utf8'));
    await mkdir(o.outDir, { recursive: true });
    const out: PackagedChart[] = [];
    for (const c of charts.sort()) if (!(await isUmbrella(c))) out.push(await helmPackage(o.helm, c, o.outDir, o.epoch));
    for (const c of charts.sort()) {
      if (!(await isUmbrella(c))) continue;
      await rm(join(c, 'charts'), { recursive: true, force: true });
      await run(o.helm, ['dependency', 'build', c]);
      out.push(await helmPackage(o.helm, c, o.outDir, o.epoch));
    }
    return out.sort((a, b) => basename(a.file).localeCompare(basename(b.file)));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
