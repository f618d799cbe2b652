/**
 * What another composition root needs to serve a node's verification service in-process: the
 * local cluster's simulated nodes (tools/simulated-node) import this, nothing else of the app.
 * The deployed program is main.ts.
 */
export { perCallIssuer } from './start.js';
export { PerCallIssuer, type OpenedIssuer } from './per-call-issuer.js';
export { VerificationService, VERIFY_USER_DATA } from './verification-service.js';
