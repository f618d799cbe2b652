/**
 * Continuous attestation of running nodes (docs/protocol/continuous-attestation.md): checking a
 * node through its verification service, verdicts, evidence summaries and the what-if judgement,
 * the quarantine policy, and how all of it is kept in Kubernetes (Node condition, taint,
 * annotation, Events, deny list). Shared by the attestation monitor, the joinservice (deny list)
 * and the CLI.
 */
export { CachedDenyList, decodeDenyList, DENY_LIST, denyKey, DenyListStore, type DenyEntry, type DenyListSource } from './deny-list.js';
export { akDigestOf, clusterMarkPcr, clusterMarkRtmr, parseSummary, registersOf, summarize, summaryValues, type EvidenceSummary, type RegisterKind } from './evidence.js';
export { awaitingRejoin, checkClusterMark, findingOfError, judgeSummary, runningNodeConfig, VERIFY_USER_DATA, type Finding } from './judge.js';
export { GrpcAttestationSource } from './grpc-attestation-source.js';
export { NodeChecker, type AttestationSource, type NodeCheckerOptions, type NodeTarget } from './node-check.js';
export { conditionOf, CONDITION_TYPE, EVENT_SOURCE, EVIDENCE_ANNOTATION, nodeView, NodeStatusWriter, QUARANTINE_TAINT, type NodeView } from './node-status.js';
export { AttestationMonitor, type Checker, type MonitorDeps, type MonitorInputs, type NodeOutcome, type NodeStore, type Quarantiner } from './monitor.js';
export { MonitorMetrics } from './monitor-metrics.js';
export { endpointOf, runningNodeValidator } from './targets.js';
export { decide, type Decision, type EnforcementMode, type PolicyInput } from './quarantine-policy.js';
export { BoundDisks, Quarantine, type NodeIdentifiers } from './quarantine.js';
export { type Verdict, type VerdictReason, type VerdictStatus } from './verdict.js';
