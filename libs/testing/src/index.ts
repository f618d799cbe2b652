/** Test helpers shared by every project: child processes with JSON log capture, real-component policy. */
export { ServiceProcess, startTsProcess, WORKSPACE_ROOT } from './process.js';
export { IN_CI, missingComponent } from './env.js';
export { findSecretLeaks, secretForms, type NamedSecret } from './secrets.js';
export { eventually, kubectlBinary } from './wait.js';
