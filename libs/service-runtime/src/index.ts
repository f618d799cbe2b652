/** Runtime pieces shared by the gRPC services: server with logging/health, metrics, signals, the one error-to-status function. */
export { GrpcServer, PEER_STREAM_LIMITS, type GrpcServerOptions, type StreamLimits } from './grpc-server.js';
export { requestGuard, StreamRefusal, type AbandonReason, type RequestGuardOptions, type StreamRefusalCode } from './request-guard.js';
export { MetricsEndpoint, ServiceMetrics } from './metrics.js';
export { fromStatus, goStatusText, isServiceError, REASON_METADATA, RpcError, toStatus, type RpcStatus, type StatusCodeName, type StatusTable, type ToStatusOptions } from './rpc-status.js';
export { handleShutdownSignals } from './signals.js';
export { normalizeGoFlags, parseGoFlags } from './go-flags.js';
export { FlagError, intFlag, parseFlagsOrExit } from './cli-flags.js';
export { PeerRateLimiter, peerHost } from './peer-rate-limiter.js';
export { RefusalLog, type RefusalLogOptions, type RefusalLogSink } from './refusal-log.js';
