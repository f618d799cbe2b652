/**
 * Request parsing of join.API (docs/protocol/join-ticket.md): pure functions from the wire request
 * to the validated domain request the ticket issuer works on. Called in one place, the gRPC
 * boundary (join-server.ts), before any stage of a ticket runs; nothing is fetched or written here.
 */
import { parseSshPublicKey, type SshPublicKey } from '@asterism/crypto';
import { k8sCompliantHostname } from '@asterism/k8s';
import type { join } from '@asterism/proto';
import { parseKubeletCsr } from '../kubernetes/kubelet-ca.js';
import { JoinError } from './errors.js';
import type { ParsedKubeletCsr } from './ports.js';

/** LUKS UUIDs as cryptsetup prints them. */
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const MAX_PRINCIPALS = 64;
export const MAX_PRINCIPAL_LENGTH = 255;
export const MAX_CSR_BYTES = 16 * 1024;
export const MAX_HOST_KEY_BYTES = 4 * 1024;

/** The two parsers of a join request's binary fields; pure, throwing on bad input. */
export interface RequestParsers {
  /** A kubelet CSR (node name from `CN=system:node:<name>`, signature checked). */
  csr(der: Uint8Array): ParsedKubeletCsr;
  /** An SSH wire-format public key. */
  hostKey(wire: Uint8Array): SshPublicKey;
}

/** The production parsers (kubernetes/kubelet-ca.ts, @asterism/crypto). */
export const DEFAULT_PARSERS: RequestParsers = { csr: parseKubeletCsr, hostKey: parseSshPublicKey };

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

function validateDiskUuid(diskUuid: string): void {
  if (diskUuid === '') throw invalid('disk_uuid is empty', 'disk_uuid');
  if (!UUID.test(diskUuid)) throw invalid(`disk_uuid ${JSON.stringify(diskUuid.slice(0, 64))} is not a UUID`, 'disk_uuid');
}

/** A rejoin request that passed validation. */
export interface RejoinRequest {
  diskUuid: string;
}

/** Parses an IssueRejoinTicket request: the disk UUID must be a UUID. */
export function parseRejoinRequest(req: join.IssueRejoinTicketRequest): RejoinRequest {
  validateDiskUuid(req.diskUuid);
  return { diskUuid: req.diskUuid };
}

/** A join request that passed validation: the domain object every ticket stage works on. */
export interface JoinRequest {
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
 * Parses and validates everything in an IssueJoinTicket request before any key is derived or any
 * Kubernetes object is created (the reference validated nothing up front). Pure: `parsers` only
 * replace the CSR and host-key parsers in unit tests.
 */
export function parseJoinRequest(req: join.IssueJoinTicketRequest, parsers: RequestParsers = DEFAULT_PARSERS): JoinRequest {
  validateDiskUuid(req.diskUuid);
  if (req.certificateRequest.length === 0) throw invalid('certificate_request is empty', 'certificate_request');
  if (req.certificateRequest.length > MAX_CSR_BYTES) throw invalid(`certificate_request is larger than ${MAX_CSR_BYTES} bytes`, 'certificate_request');
  let parsedCsr: ParsedKubeletCsr;
  try {
    parsedCsr = parsers.csr(req.certificateRequest);
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
    hostKey = parsers.hostKey(req.hostPublicKey);
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
