/** Test environment: real Kubernetes binaries built from Go modules, started per test file. */
export { binDir, controlPlaneBinaries, K8S_VERSION, missingBinaries } from './binaries.js';
export { startTestControlPlane, testenvUnavailable, type TestControlPlane } from './testenv.js';
