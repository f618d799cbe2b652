/**
 * What another composition root needs to run the bootstrapper's stages with its own node runtime
 * (docs/adr/0036-node-runtime.md): the local cluster's simulated nodes
 * (tools/simulated-node) import this, nothing else of the app.
 */
export { bootNode, EXIT_REBOOT } from '../boot.js';
export { FlagError, parseFlags, USAGE, type BootstrapperConfig } from '../flags.js';
export type { ClusterInitializer, InitClusterRequest } from '../initserver/ports.js';
export type { ClusterJoiner, JoinClusterRequest } from '../joinclient/ports.js';
export { TcpReadinessProbe, type ReadinessProbe } from '../joinclient/readiness-probe.js';
export type { RunResult } from '../run.js';
export { NodeFileWriter } from '../state/file-writer.js';
export type { AfterBoot, NodeRuntime, NodeRuntimeContext, NodeRuntimeFactory, ResidentAgent } from './node-runtime.js';
