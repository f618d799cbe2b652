/** Deployment tooling: app bundling for container images, chart CRDs and values schemas. */
export { APPS, bundleApp, entryPoint, EXTRA_ENTRY_POINTS, REPO_ROOT, type BundleResult } from './bundle.js';
export { APP_NODE_FLAGS } from './node-flags.js';
export { CRD_DIR, libCrds, readChartCrds, writeChartCrds } from './crds.js';
export { committedSchemaText, schemaPath, schemaText, valuesSchemas, writeValuesSchemas } from './schemas.js';
export { buildLocalImages, DEFAULT_IMAGE_DIR, LOCAL_IMAGE_REPOSITORY, type BuiltImage, type ImageManifest } from './images/index.js';
export { CHARTS_DIR, helmPath } from './helm.js';
