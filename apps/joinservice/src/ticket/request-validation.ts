import { k8sCompliantHostname } from '@asterism/k8s';
import type { SshPublicKey } from '@asterism/crypto';
import type { join } from '@asterism/proto';
import { JoinError } from './errors.js';
import type { ParsedKubeletCsr } from './ports.js';

/** LUKS UUIDs as cryptsetup prints them. */
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const MAX_PRINCIPALS = 64;
export const MAX_PRINCIPAL_LENGTH = 255;
export const MAX_CSR_BYTES = 16 * 1024;
export const MAX_HOST_KEY_BYTES = 4 * 1024;

/** Parses and checks a kubelet CSR (node name from `CN=system:node:<name>`); throws on bad input. */
export interface CsrValidator {
  parseCsr(csrDer: Uint8Array): ParsedKubeletCsr;
}

/** Parses and checks an SSH wire-format public key; throws on bad input. */
export interface HostKeyValidator {
  parsePublicKey(wire: Uint8Array): SshPublicKey;
}

function invalid(message: string, field: string): JoinError {
  return new JoinError('INVALID_REQUEST', message, { details: { field } });
}

/** Whitespace, control characters and commas (the certificate's principal list separator). */
function hasForbiddenChar(s: string): boolean {
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c <= 0x20 || c === 0x7f || ch === ',') return true;
  }
  return false;
}

/** Validates the disk UUID of a join or rejoin request. */
export function validateDiskUuid(diskUuid: string): void {
  if (diskUuid === '') throw invalid('disk_uuid is empty', 'disk_uuid');
  if (!UUID.test(diskUuid)) throw invalid(`disk_uuid ${JSON.stringify(diskUuid.slice(0, 64))} is not a UUID`, 'disk_uuid');
}

/** The parts of a join request that passed validation. */
export interface ValidatedJoinRequest {
  diskUuid: string;
  /** Parsed once here and handed to the kubelet CA as is. */
  csr: ParsedKubeletCsr;
  nodeName: string;
  isControlPlane: boolean;
  /** Parsed once here and handed to the SSH CA as is. */
  hostKey: SshPublicKey;
  principals: string[];
}

/**
 * Validates everything in an IssueJoinTicket request before any key is derived or any
 * Kubernetes object is created (the reference validated nothing up front).
 */
export function validateJoinRequest(req: join.IssueJoinTicketRequest, csr: CsrValidator, hostKeys: HostKeyValidator): ValidatedJoinRequest {
  validateDiskUuid(req.diskUuid);
  if (req.certificateRequest.length === 0) throw invalid('certificate_request is empty', 'certificate_request');
  if (req.certificateRequest.length > MAX_CSR_BYTES) throw invalid(`certificate_request is larger than ${MAX_CSR_BYTES} bytes`, 'certificate_request');
  let parsedCsr: ParsedKubeletCsr;
  try {
    parsedCsr = csr.parseCsr(req.certificateRequest);
  } catch (err) {
    throw new JoinError('INVALID_REQUEST', `certificate_request: ${(err as Error).message}`, { details: { field: 'certificate_request' }, cause: err });
  }
  const nodeName = parsedCsr.nodeName;
  // The name becomes a Kubernetes object name (JoiningNode) and the kubelet's identity: refuse
  // what Kubernetes would refuse, before keys, tokens or certificates exist (issue 15).
  try {
    k8sCompliantHostname(nodeName);
  } catch (err) {
    throw new JoinError('INVALID_REQUEST', `certificate_request: node name ${JSON.stringify(nodeName.slice(0, 64))} is not a valid Kubernetes node name`, {
      details: { field: 'certificate_request' },
      cause: err,
    });
  }
  if (req.hostPublicKey.length === 0) throw invalid('host_public_key is empty', 'host_public_key');
  if (req.hostPublicKey.length > MAX_HOST_KEY_BYTES) throw invalid(`host_public_key is larger than ${MAX_HOST_KEY_BYTES} bytes`, 'host_public_key');
  let hostKey: SshPublicKey;
  try {
    hostKey = hostKeys.parsePublicKey(req.hostPublicKey);
  } catch (err) {
    throw new JoinError('INVALID_REQUEST', `host_public_key: ${(err as Error).message}`, { details: { field: 'host_public_key' }, cause: err });
  }
  if (req.hostCertificatePrincipals.length > MAX_PRINCIPALS) throw invalid(`more than ${MAX_PRINCIPALS} host certificate principals`, 'host_certificate_principals');
  for (const p of req.hostCertificatePrincipals) {
    if (p.length === 0 || p.length > MAX_PRINCIPAL_LENGTH || hasForbiddenChar(p)) {
      throw invalid(`invalid host certificate principal ${JSON.stringify(p.slice(0, 64))}`, 'host_certificate_principals');
    }
  }
  return {
    diskUuid: req.diskUuid,
    csr: parsedCsr,
    nodeName,
    isControlPlane: req.isControlPlane,
    hostKey,
    principals: [...req.hostCertificatePrincipals],
  };
}
