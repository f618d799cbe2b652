/**
 * Every function of this library that reads bytes or text a peer (or a collateral server) sent,
 * including the codecs the main entry keeps internal. It exists for the foreign-exception gate
 * (tools/fuzz): each of these may only throw an AttestationError. Product code imports the
 * main entry instead.
 */
export { azureTdxTrustedKey, decodeAzureTdxInstanceInfo } from './variants/azure-tdx.js';
export { parseTdxHclReport } from './azure/hcl-report.js';
export { unmarshalAttestationConfig } from './attestation-config.js';
export { decodeMeasurementsJson, decodeMeasurementsYaml, encodeMeasurementsJson, encodeMeasurementsYaml } from './measurements/codec.js';
export { decodeImageMeasurementsV2 } from './measurements/image-measurements.js';
export { parseCertTable } from './snp/cert-table.js';
export { parseAmdCertificate, parseAmdChain, parseSignerCertificate, pemCertificates } from './snp/certs.js';
export { SignatureMemo } from './snp/chain.js';
export { SnpCollateral } from './snp/collateral.js';
export { parseHclReport } from './snp/hcl.js';
export { decodeSnpInstanceInfo } from './snp/instance-info.js';
export { parseReport } from './snp/report.js';
export { SnpVerifier, type SnpEvidence } from './snp/verifier.js';
export { parseQeIdentity, parseTcbInfo } from './tdx/collateral.js';
export { decodeTdxDocument } from './tdx/document.js';
export { parseCrl } from './tdx/pki.js';
export { parsePemChain, readPckTcb } from './tdx/pck.js';
export { parseTdxQuote } from './tdx/quote.js';
export { DcapVerifier } from './tdx/verifier.js';
export { decodeDocument, encodeDocument, type VtpmAttestationDocument } from './vtpm/document.js';
export { parseEventLog, replayEventLog } from './vtpm/event-log.js';
