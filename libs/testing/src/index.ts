/** Test helpers shared by every project: child processes with JSON log capture, real-component policy. */
export { runCaptured, ServiceProcess, startTsProcess, WORKSPACE_ROOT, type CapturedRun } from './process.js';
export { IN_CI, missingComponent } from './env.js';
export { findSecretLeaks, secretForms, type NamedSecret } from './secrets.js';
export { eventually, kubectlBinary } from './wait.js';
