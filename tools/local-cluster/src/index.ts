/** The local cluster's building blocks, for its CLI (main.ts) and for other projects' process tests. */
export { addNode, down, nodeObjects, readNodeStatus, readState, rebootNode, runCliInit, startBootstrapper, up, waitForNodes, WORKSPACE_ROOT, type ClusterState, type NodeStatusFile, type ProgramRuntime, type UpOptions } from './cluster.js';
export { memorySummary, sessionProcesses, type ClusterProcess, type ProcessKind } from './processes.js';
export { buildPrograms } from './programs.js';
export { alive, startDetached, stopDetached, type DetachedProcess } from './detached.js';
export { newInitSecret } from './init-secret.js';
export { ClusterLayout, planNodes, type NodeSpec } from './layout.js';
export { createHostKey, createStateDisk, resetTpm, startSwtpm } from './machine.js';
export { attestationConfigJson, BOOT_MEASUREMENTS, expectedBootPcrs, measureBoot } from './measured-boot.js';
export { writeMetadataFile } from './metadata-file.js';
