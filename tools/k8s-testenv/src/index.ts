/** Test environment: real Kubernetes binaries built from Go modules, started per test file. */
export { artifactsRoot, binDir, cacheRoot, controlPlaneBinaries, K8S_VERSION, missingBinaries } from './binaries.js';
export { ARTIFACT_LAYOUT, artifactFile, imageArtifact, imageArtifactPath, KUBERNETES_IMAGES, publishFile, publishImages, readBuiltImages, rowDifferences, rowFromArtifacts, sha256File, type BuiltImageEntry } from './versions-manifest.js';
export { startTestControlPlane, testenvUnavailable, type TestControlPlane } from './testenv.js';
