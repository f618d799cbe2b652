/**
 * `versions-manifest [write|check] [VERSION...]`: writes libs/versions/src/manifest.generated.ts
 * from the packed artifacts of the given versions (default: every version the manifest has), or
 * checks that the artifacts on this machine hash exactly as the manifest says (exit 1 otherwise).
 * Images are taken from deploy's images.json of each version when it was built
 * (`npx nx run deploy:images`; the local cluster builds them per version).
 */
import { join } from 'node:path';
import { supportedKubernetesVersions, versionRow } from '@asterism/versions';
import { artifactsRoot, K8S_VERSION } from './binaries.js';
import { publishImages, readBuiltImages, rowDifferences, rowFromArtifacts, writeManifest } from './versions-manifest.js';

const REPO = join(import.meta.dirname, '..', '..', '..');
const TARGET = join(REPO, 'libs', 'versions', 'src', 'manifest.generated.ts');
/** Where deploy's image build writes images.json: dist/images for the pinned version, dist/images/<version> for others. */
const imagesJson = (version: string) => (version === K8S_VERSION ? join(REPO, 'dist', 'images', 'images.json') : join(REPO, 'dist', 'images', version, 'images.json'));

async function main(argv: string[]): Promise<number> {
  const [mode = 'check', ...rest] = argv;
  const versions = rest.length > 0 ? rest : supportedKubernetesVersions();
  if (mode === 'write') {
    // The image archives the rows hash are the ones the artifact server serves.
    for (const v of versions) await publishImages(artifactsRoot(), v, await readBuiltImages(imagesJson(v)));
    const rows = await writeManifest(TARGET, artifactsRoot(), versions, imagesJson);
    for (const r of rows) for (const c of [...r.components.map((x) => [x.name, x.hash]), ...r.images.map((x) => [x.ref, x.digest])]) process.stdout.write(`${r.kubernetesVersion} ${c.join(' ')}\n`);
    process.stdout.write(`wrote ${TARGET}\n`);
    return 0;
  }
  if (mode !== 'check') throw new Error(`unknown mode "${mode}": want write or check`);
  const diffs: string[] = [];
  for (const v of versions) diffs.push(...rowDifferences(versionRow(v), await rowFromArtifacts(artifactsRoot(), v, imagesJson(v))));
  for (const d of diffs) process.stderr.write(`${d}\n`);
  process.stdout.write(diffs.length === 0 ? `artifacts of ${versions.join(', ')} match the manifest\n` : `${diffs.length} difference(s)\n`);
  return diffs.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`versions-manifest: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
