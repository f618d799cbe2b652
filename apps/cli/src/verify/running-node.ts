import { createHash } from 'node:crypto';
import type { Validator } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import { RecordingValidator } from './recording-validator.js';

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

/** The cluster ID check: PCR 15 expected for the given ID vs what the node reported. */
export interface ClusterIdCheck {
  expected: string;
  actual: string | null;
  ok: boolean;
}

/** What `asterism verify --endpoint` found. */
export interface RunningNodeResult {
  endpoint: string;
  document: Uint8Array;
  pcrs: Map<number, Buffer> | undefined;
  /** The attestation validation (signature, nonce, measurements) and user data "VerifyService". */
  attestation: { ok: true } | { ok: false; error: Error };
  clusterId: ClusterIdCheck | undefined;
  accepted: boolean;
}

/** PCR 15 (SHA-256 bank) of a node marked once with `clusterId`: SHA256(0^32 || SHA256(clusterId)). */
export function clusterIdPcr(clusterId: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.alloc(32)).update(createHash('sha256').update(clusterId).digest()).digest();
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
 * cluster ID the marking in PCR 15. The document is kept for `-o raw`.
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
  let clusterId: ClusterIdCheck | undefined;
  if (opts.clusterId) {
    if (!recorder.pcrs) throw new VerifyNodeError('CLUSTER_ID_UNSUPPORTED', `--cluster-id needs a TPM variant (PCR 15); ${validator.variant} has no PCRs`);
    const actual = recorder.pcrs.get(CLUSTER_ID_PCR);
    const expected = clusterIdPcr(opts.clusterId).toString('hex');
    const actualHex = actual ? actual.toString('hex') : null;
    clusterId = { expected, actual: actualHex, ok: actualHex === expected };
  }
  return { endpoint: opts.endpoint, document, pcrs: recorder.pcrs, attestation, clusterId, accepted: attestation.ok && (clusterId?.ok ?? true) };
}
