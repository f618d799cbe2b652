/**
 * `npx tsx deploy/src/images-cli.ts [--out <dir>] [--k8s-bin-dir <dir>] [name...]`: builds the
 * local container images (docs/adr/0018) into OCI archives plus `images.json`.
 */
import { parseArgs } from 'node:util';
import { buildLocalImages, DEFAULT_IMAGE_DIR } from './images/index.js';
import { defaultK8sBinDir } from './images/k8s-binaries.js';

const USAGE = `Usage: images [--out <dir>] [--k8s-bin-dir <dir>] [name...]

Builds the node images with buildah (FROM scratch, reproducible): pause, etcd, kube-apiserver,
kube-controller-manager, kube-scheduler, kube-proxy, joinservice, keyservice, verification-service,
busybox. Unchanged
inputs are not rebuilt. Output: one OCI archive per image and images.json.

  --out <dir>          output folder (default ${DEFAULT_IMAGE_DIR})
  --k8s-bin-dir <dir>  Kubernetes binaries (default: $ASTERISM_K8S_BIN_DIR, else the test
                       environment's build folder of the pinned version)
  -h, --help           this help`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { out: { type: 'string' }, 'k8s-bin-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
try {
  const manifest = await buildLocalImages({
    k8sBinDir: values['k8s-bin-dir'] ?? defaultK8sBinDir(),
    ...(values.out ? { outDir: values.out } : {}),
    ...(positionals.length ? { only: positionals } : {}),
    progress: (l) => process.stderr.write(`${l}\n`),
  });
  for (const i of manifest.images) process.stdout.write(`${i.ref}\t${i.archive}\n`);
} catch (err) {
  process.stderr.write(`images: ${(err as Error).message}\n`);
  process.exit(1);
}
