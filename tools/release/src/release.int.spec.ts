/**
 * The release build, twice from the same commit: the first into the default build folder with the
 * executable cache, the second into a fresh build folder (fresh buildah storage, bundles rebuilt)
 * with the cache off. Every artifact is listed with its SHA-256 and the two manifests and all
 * files are byte-identical; the charts load in helm, the image archives are content-addressed
 * under their recorded digests, the archives carry the source date, and the executable reports
 * the manifest's commit. Real helm 3.17.2 and buildah.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { helmPath, REPO_ROOT, SERVICE_BUNDLES } from '@asterism/deploy';
import { missingComponent } from '@asterism/testing';
import { sha256File } from './hashing.js';
import type { ReleaseManifest } from './manifest.js';
import { buildRelease } from './release.js';

const has = (cmd: string, args: string[]) => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const skip = !has(helmPath(), ['version']) ? missingComponent('helm', 'bash tools/scripts/setup.d/30-helm.sh') : !has('buildah', ['--version']) ? missingComponent('buildah', 'apt-get install buildah') : false;
const tarList = (archive: string, flags = '-tvf') => execFileSync('tar', [flags, archive, '--utc', '--full-time'], { encoding: 'utf8', maxBuffer: 1 << 26 });

describe('release build: every artifact with its hash, reproducible', { skip }, () => {
  const top = mkdtempSync(join(tmpdir(), 'asterism-release-'));
  const a = join(top, 'a');
  const b = join(top, 'b');
  const secondWork = join(REPO_ROOT, 'dist', '.release-work-check');
  let m: ReleaseManifest;
  let m2: ReleaseManifest;

  before(async () => {
    const say = (l: string) => process.stderr.write(`# ${l}\n`);
    let started = Date.now();
    m = await buildRelease({ outDir: a, progress: say });
    say(`first build ${((Date.now() - started) / 1000).toFixed(1)} s`);
    started = Date.now();
    m2 = await buildRelease({ outDir: b, workDir: secondWork, seaCache: null, progress: say });
    say(`second build (fresh build folder, executable cache off) ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
  after(() => {
    rmSync(top, { recursive: true, force: true });
    rmSync(secondWork, { recursive: true, force: true });
  });

  it('lists every artifact with its SHA-256 and size; SHA256SUMS says the same', async () => {
    const kinds = m.artifacts.map((x) => x.kind).sort();
    // One chart per folder of deploy/charts, one image per service bundle (the attestation monitor joined both, issue 33).
    const charts = readdirSync(join(REPO_ROOT, 'deploy', 'charts'), { withFileTypes: true }).filter((d) => d.isDirectory()).length;
    const expected = ['bootstrapper-bundle', 'cli', 'cli-bundle', 'cli-licenses', ...Array<string>(charts).fill('helm-chart'), ...Array<string>(SERVICE_BUNDLES.length).fill('image')];
    assert.deepEqual(kinds, expected);
    for (const x of m.artifacts) assert.equal(await sha256File(join(a, x.path)), x.sha256, x.path);
    const sums = readFileSync(join(a, 'SHA256SUMS'), 'utf8');
    assert.equal(sums, m.artifacts.map((x) => `${x.sha256}  ${x.path}\n`).join(''));
    execFileSync('sha256sum', ['--check', '--quiet', 'SHA256SUMS'], { cwd: a });
    assert.match(m.commit, /^[0-9a-f]{40}(-dirty)?$/);
    assert.deepEqual(m.artifacts.filter((x) => x.kind === 'image').map((x) => x.ref), ['attestation-monitor', 'joinservice', 'keyservice', 'verification-service'].map((n) => `localhost/asterism/${n}:0.1.0`));
  });

  it('a second build gives the same bytes: manifest, SHA256SUMS and every artifact', () => {
    assert.equal(readFileSync(join(b, 'manifest.json'), 'utf8'), readFileSync(join(a, 'manifest.json'), 'utf8'));
    assert.equal(readFileSync(join(b, 'SHA256SUMS'), 'utf8'), readFileSync(join(a, 'SHA256SUMS'), 'utf8'));
    assert.deepEqual(m2, m);
  });

  it('the charts load in helm with their recorded name and version; the umbrella carries the four subcharts', () => {
    for (const c of m.artifacts.filter((x) => x.kind === 'helm-chart')) {
      const shown = execFileSync(helmPath(), ['show', 'chart', join(a, c.path)], { encoding: 'utf8' });
      assert.match(shown, new RegExp(`^name: ${c.name}$`, 'm'));
      assert.match(shown, new RegExp(`^version: ${c.version}$`, 'm'));
    }
    const umbrella = m.artifacts.find((x) => x.name === 'asterism-services')!;
    const entries = tarList(join(a, umbrella.path), '-tzvf');
    for (const sub of ['joinservice', 'keyservice', 'verificationservice', 'attestationmonitor']) assert.match(entries, new RegExp(` asterism-services/charts/${sub}/Chart\\.yaml\n`));
  });

  it('each image archive holds its manifest under the recorded digest (content-addressed)', () => {
    for (const img of m.artifacts.filter((x) => x.kind === 'image')) {
      const archive = join(a, img.path);
      const hex = img.digest!.replace(/^sha256:/, '');
      const manifest = execFileSync('tar', ['-xOf', archive, `blobs/sha256/${hex}`], { maxBuffer: 1 << 20 });
      assert.equal(createHash('sha256').update(manifest).digest('hex'), hex, img.path);
      const layers = (JSON.parse(manifest.toString()) as { layers: { digest: string }[] }).layers;
      assert.equal(layers.length, 1, 'one layer: the staged rootfs');
    }
  });

  it('archive entries carry the source date (SOURCE_DATE_EPOCH) and owner 0', () => {
    const date = new Date(m.sourceDateEpoch * 1000).toISOString().replace('T', ' ').replace(/\.000Z$/, '');
    for (const x of m.artifacts.filter((y) => y.kind === 'bootstrapper-bundle' || y.kind === 'helm-chart' || y.kind === 'image')) {
      const lines = tarList(join(a, x.path), x.path.endsWith('.tar') ? '-tvf' : '-tzvf').trim().split('\n');
      for (const line of lines) {
        assert.ok(line.includes(` ${date} `), `${x.path}: ${line}`);
        assert.match(line, /^\S+ 0\/0 /, `${x.path}: ${line}`);
      }
    }
    assert.match(tarList(join(a, `asterism-bootstrapper-${m.version}.tar.gz`), '-tzvf'), /bootstrapper\/main\.mjs\n/);
  });

  it('the executable of the release reports the manifest commit and versions', () => {
    const exe = m.artifacts.find((x) => x.kind === 'cli')!;
    const out = JSON.parse(execFileSync(join(a, exe.path), ['version', '-o', 'json'], { cwd: top, env: { PATH: '/nonexistent' }, encoding: 'utf8' })) as Record<string, unknown>;
    assert.deepEqual(out, { version: m.version, commit: m.commit, build: 'bundle', kubernetesVersions: m.kubernetesVersions, attestationVariants: m.attestationVariants });
  });
});
