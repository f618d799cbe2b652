/**
 * vTPM targets: the attestation document (Go JSON) carrying the real SNP evidence as instance
 * info, the TCG event log, and the aTLS certificate whose extension carries such a document.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeDocument, encodeSnpInstanceInfo, GCE_TECHNOLOGY, REPORT_SIZE, Variant } from '@asterism/attestation';
import { decodeDocument, decodeSnpInstanceInfo, parseEventLog, replayEventLog, type VtpmAttestationDocument } from '@asterism/attestation/parsers';
import { gceEventLog } from '@asterism/attestation/testing';
import { createAtlsCertificate, parseAtlsCertificate } from '@asterism/atls';
import type { FuzzTarget } from '../gate.js';
import { vector } from '../vectors.js';

const SHA256_BANK = 0x000b;
/** When the gate's aTLS certificate was made and is checked (inside its validity). */
const CERT_TIME = new Date('2025-01-01T00:00:00Z');

/** An azure-sev-snp style vTPM document whose instance info is the real Azure SNP evidence. */
function snpDocument(): Buffer {
  const attestation = vector('snp/attestation.bin');
  const instanceInfo = encodeSnpInstanceInfo({
    reportSigner: vector('snp/vcek.pem'),
    certChain: vector('snp/certchain.pem'),
    attestationReport: attestation.subarray(0, REPORT_SIZE),
    azure: { runtimeData: vector('snp/runtimedata.bin'), maaToken: '' },
    gcp: null,
  });
  const doc: VtpmAttestationDocument = {
    attestation: {
      akPub: Buffer.from('0001000b00050072000000100014000b0800000000000100', 'hex'),
      quotes: [{ quote: Buffer.from('ff544347801800', 'hex'), rawSig: Buffer.alloc(0), pcrs: { hash: SHA256_BANK, pcrs: new Map([[0, Buffer.alloc(32, 1)]]) } }],
      eventLog: gceEventLog(GCE_TECHNOLOGY.AMD_SEV_SNP).log,
      instanceInfo: null,
      canonicalEventLog: Buffer.alloc(0),
      akCert: vector('snp/vcek.cert'),
      intermediateCerts: [vector('amd/milan-ask.pem')],
      teeAttestation: null,
    },
    instanceInfo,
    userData: createHash('sha256').update('user data').digest(),
  };
  return encodeDocument(doc);
}

/** A document's parts a validator reads first: the instance info and the event log. */
function readDocument(b: Buffer): void {
  const doc = decodeDocument(b);
  encodeDocument(doc);
  if (doc.instanceInfo) decodeSnpInstanceInfo(doc.instanceInfo);
  if (doc.attestation && doc.attestation.eventLog.length > 0) replayEventLog(parseEventLog(doc.attestation.eventLog), SHA256_BANK);
}

/** Where the aTLS certificate the atls.certificate target starts from is kept (a fresh one has a new key and serial). */
export const ATLS_CERTIFICATE_FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'atls-certificate.der');

/** An aTLS certificate (new key, made at CERT_TIME) carrying `document` in the azure-sev-snp extension. */
export async function makeAtlsCertificate(document: Buffer = snpDocument()): Promise<Buffer> {
  const issuer = { variant: Variant.fromString('azure-sev-snp'), issue: async () => document };
  return (await createAtlsCertificate({ nonce: Buffer.alloc(32, 7), issuer, now: CERT_TIME })).der;
}

/** The vTPM and aTLS targets. */
export function vtpmTargets(): FuzzTarget[] {
  const document = snpDocument();
  const oid = Variant.fromString('azure-sev-snp').oid;
  const cert = { der: readFileSync(ATLS_CERTIFICATE_FIXTURE) };
  return [
    {
      name: 'vtpm.document',
      parser: 'decodeDocument + decodeSnpInstanceInfo + parseEventLog (libs/attestation/src/vtpm, snp)',
      seeds: [{ name: 'vTPM document with snp/attestation.bin, vcek.pem, vcek.cert, certchain.pem, runtimedata.bin, amd/milan-ask.pem', bytes: document }],
      runs: 3000,
      shape: { json: true },
      run: readDocument,
    },
    {
      name: 'vtpm.event-log',
      parser: 'parseEventLog + replayEventLog (libs/attestation/src/vtpm/event-log.ts)',
      seeds: [
        { name: 'GCE SEV-SNP platform event log (fixture)', bytes: gceEventLog(GCE_TECHNOLOGY.AMD_SEV_SNP).log },
        { name: 'GCE SEV-ES platform event log (fixture)', bytes: gceEventLog(GCE_TECHNOLOGY.AMD_SEV_ES).log },
      ],
      runs: 3000,
      run: (b) => replayEventLog(parseEventLog(b), SHA256_BANK),
    },
    {
      name: 'atls.certificate',
      parser: 'parseAtlsCertificate (libs/atls/src/verify.ts) + the document in its extension',
      seeds: [{ name: 'aTLS certificate carrying the vTPM document above (tools/fuzz/fixtures/atls-certificate.der)', bytes: cert.der }],
      runs: 3000,
      run: (b) => {
        for (const ext of parseAtlsCertificate(b, CERT_TIME).extensions) if (ext.oid === oid) readDocument(ext.value);
      },
    },
  ];
}
