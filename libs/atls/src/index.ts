/**
 * Attested TLS for grpc-js (docs/protocol/atls.md): server and channel credentials that speak
 * the reference's aTLS (SNI nonce, CA-list nonce, document in a certificate extension), plus
 * exporter-bound client evidence for Node clients (docs/adr/0004).
 */

export { atlsServerCredentials, AtlsServerCredentials, type AtlsPeerInfo, type AtlsServerOptions } from './server-credentials.js';
export { atlsChannelCredentials, AtlsChannelCredentials, type AtlsChannelOptions } from './channel-credentials.js';
export { AtlsError, type AtlsErrorCode } from './errors.js';
export { ATLS_EVIDENCE_METADATA_KEY, ATLS_EXPORTER_LABEL, ATLS_MAX_EVIDENCE_BYTES, ATLS_MAX_HEADER_LIST_BYTES, issueExporterEvidence } from './evidence.js';
export { createAtlsCertificate, generateAtlsKey, type AtlsCertificate, type AtlsKey } from './certificate.js';
export { parseAtlsCertificate, verifyAtlsCertificate, VALIDATION_TIMEOUT_MS, type AtlsPeerVerdict, type ParsedAtlsCertificate } from './verify.js';
export { atlsCallError, ATLS_CLIENT_CHANNEL_OPTIONS } from './call-errors.js';
