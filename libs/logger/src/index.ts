/** winston JSON logging with secret redaction, a gRPC server logging interceptor, and the join-id metadata of a join's trace. */
export { createLogger, createNopLogger, levelFromVerbosity, type Logger, type LoggerOptions, type LogLevel } from './logger.js';
export { isSecretFieldName, REDACTED, redactValue, Secret, SecretRegistry } from './redaction.js';
export { loggingInterceptor, statusName, type CallObserver, type LoggingInterceptorOptions } from './grpc-interceptor.js';
export { JOIN_ID_METADATA, joinIdFrom, readJoinId, setJoinId } from './join-id.js';
