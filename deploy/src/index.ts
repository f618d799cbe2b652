/** Deployment tooling: app bundling for container images, chart CRDs and values schemas. */
export { APPS, bundleApp, entryPoint, REPO_ROOT, type BundleOptions, type BundleResult } from './bundle.js';
export { APP_NODE_FLAGS } from './node-flags.js';
export { CRD_DIR, libCrds, readChartCrds, writeChartCrds } from './crds.js';
export { committedSchemaText, schemaPath, schemaText, valuesSchemas, writeValuesSchemas } from './schemas.js';
export { ASTERISM_IMAGE_TAG, buildImages, buildLocalImages, IMAGE_OVERLAY_FILE, serviceImageOverlay, serviceImagePath, DEFAULT_IMAGE_DIR, imageCatalog, LOCAL_IMAGE_REPOSITORY, SERVICE_BUNDLES, type BuiltImage, type ImageManifest } from './images/index.js';
export { CHARTS_DIR, helmPath } from './helm.js';
