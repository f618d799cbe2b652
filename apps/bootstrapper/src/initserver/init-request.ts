import { isIP } from 'node:net';
import { MASTER_SECRET_LENGTH_MIN, parseKmsUri, parseStorageUri, RNG_LENGTH_DEFAULT, type MasterSecret } from '@asterism/crypto';
import type { init } from '@asterism/proto';
import { parseComponents } from '../components/component-spec.js';
import { InitFailure } from './init-failure.js';

/** Upper bounds for request fields (the reference had none). */
const MAX_SALT = 1024;
const MAX_MASTER_SECRET = 1024;
const MAX_SANS = 64;
/** Most components an init request may name (the reference sends ~6). */
const MAX_COMPONENTS = 64;
/** RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens; a leading `*.` allowed. */
const DNS_NAME = /^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** An Init request that passed every check; the init flow works only on this. */
export interface ValidInitRequest {
  readonly masterSecret: MasterSecret;
  readonly measurementSalt: Buffer;
  readonly apiServerCertSans: readonly string[];
}

/**
 * Checks everything about an Init request that can be checked without side effects, so a
 * client's mistake is INVALID_ARGUMENT before the node is locked (a lock cannot be undone without
 * a reboot). The master secret and salt must be usable by the keyservice (at least 16 and 32
 * bytes, see docs/protocol/init-validation.md), the KMS and storage URIs supported, SANs IP
 * addresses or DNS names, the service CIDR (when set) a CIDR, and the Kubernetes components
 * well-formed (docs/protocol/components.md; their artifacts are checked when installed).
 */
export function validateInitRequest(req: init.InitRequest): ValidInitRequest {
  const invalid = (message: string, cause?: unknown) => new InitFailure('INVALID_REQUEST', message, { cause });
  let masterSecret: MasterSecret;
  try {
    const storage = parseStorageUri(req.storageUri);
    if (storage.type !== 'no-store') throw invalid(`storage backend ${storage.type} is not supported`);
    const cfg = parseKmsUri(req.kmsUri);
    if (cfg.type !== 'cluster-kms') throw invalid(`KMS backend ${cfg.type} is not supported`);
    masterSecret = cfg.masterSecret;
  } catch (err) {
    throw invalid(`creating kms client: ${(err as Error).message}`, err);
  }
  const lengths = masterSecretLengthProblem(masterSecret);
  if (lengths) throw invalid(lengths);
  if (req.measurementSalt.length > MAX_SALT) throw invalid(`measurement salt longer than ${MAX_SALT} bytes`);
  if (req.apiserverCertSans.length > MAX_SANS) throw invalid(`${req.apiserverCertSans.length} API server certificate SANs, at most ${MAX_SANS}`);
  for (const san of req.apiserverCertSans) {
    if (san !== '' && isIP(san) === 0 && (san.length > 253 || !DNS_NAME.test(san))) {
      throw invalid(`API server certificate SAN ${JSON.stringify(san.slice(0, 64))} is neither an IP address nor a DNS name`);
    }
  }
  if (req.serviceCidr !== '' && !isCidr(req.serviceCidr)) throw invalid(`service CIDR ${JSON.stringify(req.serviceCidr.slice(0, 64))} is not a CIDR`);
  if (req.kubernetesComponents.length > MAX_COMPONENTS) throw invalid(`${req.kubernetesComponents.length} Kubernetes components, at most ${MAX_COMPONENTS}`);
  try {
    parseComponents(req.kubernetesComponents);
  } catch (err) {
    throw invalid((err as Error).message, err);
  }
  return { masterSecret, measurementSalt: Buffer.from(req.measurementSalt), apiServerCertSans: req.apiserverCertSans };
}

/**
 * Why a master secret's key or salt length is not usable (at least 16 and 32 bytes, at most 1 KiB
 * each; docs/protocol/init-validation.md), or undefined. Init and recovery accept the same lengths.
 */
export function masterSecretLengthProblem({ key, salt }: MasterSecret): string | undefined {
  if (key.length < MASTER_SECRET_LENGTH_MIN || key.length > MAX_MASTER_SECRET) return `master secret is ${key.length} bytes, need ${MASTER_SECRET_LENGTH_MIN} to ${MAX_MASTER_SECRET}`;
  if (salt.length < RNG_LENGTH_DEFAULT || salt.length > MAX_SALT) return `master secret salt is ${salt.length} bytes, need ${RNG_LENGTH_DEFAULT} to ${MAX_SALT}`;
  return undefined;
}

function isCidr(s: string): boolean {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(s);
  if (!m) return false;
  const family = isIP(m[1]!);
  return family !== 0 && Number(m[2]) <= (family === 4 ? 32 : 128);
}
