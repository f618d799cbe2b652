/** One-way node lock shared by InitServer and JoinClient; the winner marks the node (PCR 15). */
export { isMarkedValue, NodeLock, NodeLockError, type LockResult, type NodeMarker } from './node-lock.js';
export { CLUSTER_ID_PCR, isNodeBootstrapped, readClusterIdPcr, TpmNodeMarker } from './tpm-marker.js';
export { CLUSTER_ID_RTMR, isRtmrNodeBootstrapped, RtmrNodeMarker, SysfsRtmrDevice, TDX_MEASUREMENTS_DIR, type RtmrDevice } from './rtmr-marker.js';
