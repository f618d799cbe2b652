/** The foreign-exception gate (see README.md): targets, the runner and the mutation engine. */
export { NOT_REACHED, runTarget, targetSeed, type Finding, type FuzzTarget, type Seed, type TargetReport } from './gate.js';
export { mutate, mutateOnce, type MutationShape } from './mutate/index.js';
export { Prng } from './prng.js';
export { runGate, type GateReport } from './run-gate.js';
export { allTargets } from './targets/index.js';
export { opensslKubeletCsrs, protoFromJson, SEED_KMS_URI } from './targets/requests.js';
