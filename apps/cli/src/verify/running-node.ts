import { createHash } from 'node:crypto';
import { tdMeasurements, TDX_INDEX_CLUSTER_ID, variantDescriptor, type Validator } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import { RecordingValidator } from './recording-validator.js';
import { tdBodyOf } from './tdx-report.js';

/** User data of every verification-service document (docs/protocol/verification.md). */
export const VERIFY_USER_DATA = Buffer.from('VerifyService', 'ascii');
/** The PCR a TPM node is marked in with its cluster ID. */
export const CLUSTER_ID_PCR = 15;

/** Fetches a node's attestation document for a nonce (verify.API/GetAttestation). */
export interface AttestationSource {
  getAttestation(endpoint: string, nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array>;
}

/** Why verifying a running node could not even judge it. */
export class VerifyNodeError extends AsterismError<'NODE_UNREACHABLE' | 'CLUSTER_ID_INVALID' | 'CLUSTER_ID_UNSUPPORTED'> {}

/** Where a node carries its cluster ID mark (docs/protocol/node-lock.md). */
export type ClusterIdRegister = 'PCR 15' | 'RTMR2';

/** The cluster ID check: the register value expected for the given ID vs what the node reported. */
export interface ClusterIdCheck {
  register: ClusterIdRegister;
  expected: string;
  actual: string | null;
  ok: boolean;
}

/** What `asterism verify --endpoint` found. */
export interface RunningNodeResult {
  endpoint: string;
  document: Uint8Array;
  pcrs: Map<number, Buffer> | undefined;
  /** qemu-tdx: MRTD and RTMR0..3 as indices 0..4 (docs/protocol/tdx-dcap.md). */
  tdMeasurements: Map<number, Buffer> | undefined;
  /** The attestation validation (signature, nonce, measurements) and user data "VerifyService". */
  attestation: { ok: true } | { ok: false; error: Error };
  clusterId: ClusterIdCheck | undefined;
  accepted: boolean;
}

/** PCR 15 (SHA-256 bank) of a node marked once with `clusterId`: SHA256(0^32 || SHA256(clusterId)). */
export function clusterIdPcr(clusterId: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.alloc(32)).update(createHash('sha256').update(clusterId).digest()).digest();
}

/** RTMR2 of a TD marked once with `clusterId` from zero: SHA384(0^48 || SHA384(clusterId)) (docs/protocol/tdx-dcap.md). */
export function clusterIdRtmr(clusterId: Uint8Array): Buffer {
  return createHash('sha384').update(Buffer.alloc(48)).update(createHash('sha384').update(clusterId).digest()).digest();
}

/** Parses `--cluster-id`: base64 (as in asterism-id.json) or 64 hex digits; 32 bytes. */
export function parseClusterId(text: string): Buffer {
  const t = text.trim();
  const id = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : /^[A-Za-z0-9+/_-]+={0,2}$/.test(t) ? Buffer.from(t, 'base64') : Buffer.alloc(0);
  if (id.length !== 32) throw new VerifyNodeError('CLUSTER_ID_INVALID', `invalid --cluster-id: want the 32-byte cluster ID as base64 (asterism-id.json "clusterID") or 64 hex digits`);
  return id;
}

/**
 * Verifies a running node through its verification service: fresh nonce, GetAttestation, the
 * variant's validator (signature, nonce, measurements), user data "VerifyService", and with a
 * cluster ID the mark in PCR 15 (TPM variants) or RTMR2 (qemu-tdx). The document is kept for
 * `-o raw`.
 */
export async function verifyRunningNode(source: AttestationSource, validator: Validator, opts: { endpoint: string; clusterId?: Buffer; timeoutMs: number }): Promise<RunningNodeResult> {
  const nonce = generateNonce();
  let document: Uint8Array;
  try {
    document = await source.getAttestation(opts.endpoint, nonce, AbortSignal.timeout(opts.timeoutMs));
  } catch (err) {
    throw new VerifyNodeError('NODE_UNREACHABLE', `no attestation from the verification service at ${opts.endpoint}: ${(err as Error).message}`);
  }
  const recorder = new RecordingValidator(validator);
  let attestation: RunningNodeResult['attestation'];
  try {
    const userData = await recorder.validate(document, nonce);
    attestation = Buffer.from(userData).equals(VERIFY_USER_DATA) ? { ok: true } : { ok: false, error: new Error('the document is not bound to the verification service (user data differs)') };
  } catch (err) {
    attestation = { ok: false, error: err as Error };
  }
  const body = variantDescriptor(validator.variant).platform === 'tdx' ? tdBodyOf(document) : undefined;
  const td = body ? tdMeasurements(body) : undefined;
  const clusterId = opts.clusterId ? checkClusterId(opts.clusterId, recorder.pcrs, td, validator) : undefined;
  return { endpoint: opts.endpoint, document, pcrs: recorder.pcrs, tdMeasurements: td, attestation, clusterId, accepted: attestation.ok && (clusterId?.ok ?? true) };
}

/**
 * Compares the node's mark register with the value the cluster ID gives: RTMR2 on a TD without a
 * TPM (qemu-tdx), PCR 15 on every vTPM variant (azure-tdx included). A document without the
 * register counts as missing; an insecure variant (dummy) has no register.
 */
function checkClusterId(id: Buffer, pcrs: Map<number, Buffer> | undefined, td: Map<number, Buffer> | undefined, validator: Validator): ClusterIdCheck {
  const variant = validator.variant.name;
  const d = variantDescriptor(validator.variant);
  if (d.insecure) throw new VerifyNodeError('CLUSTER_ID_UNSUPPORTED', `--cluster-id needs a TPM variant (PCR 15) or qemu-tdx (RTMR2); ${variant} has neither`);
  const [register, expected, actual]: [ClusterIdRegister, Buffer, Buffer | undefined] =
    d.platform === 'tdx' ? ['RTMR2', clusterIdRtmr(id), td?.get(TDX_INDEX_CLUSTER_ID)] : ['PCR 15', clusterIdPcr(id), pcrs?.get(CLUSTER_ID_PCR)];
  const actualHex = actual && actual.length > 0 ? actual.toString('hex') : null;
  return { register, expected: expected.toString('hex'), actual: actualHex, ok: actualHex === expected.toString('hex') };
}
