import { AsterismError } from '@asterism/errors';

/** A node's role (JSON strings as in the reference). */
export type Role = 'ControlPlane' | 'Worker' | 'Unknown';

/** One instance as the cloud (or the local cluster) describes it; Go JSON field names. */
export interface InstanceMetadata {
  Name: string;
  ProviderID: string;
  Role: Role;
  VPCIP: string;
  SecondaryIPRange: string;
  AliasIPRanges: string[] | null;
}

/** What the bootstrapper asks the platform (docs/protocol/metadata.md). */
export interface MetadataProvider {
  self(signal?: AbortSignal): Promise<InstanceMetadata>;
  list(signal?: AbortSignal): Promise<InstanceMetadata[]>;
  /** Host and port of the control-plane load balancer (port "6443" on QEMU). */
  getLoadBalancerEndpoint(signal?: AbortSignal): Promise<{ host: string; port: string }>;
  /** bcrypt hash of the init secret (`$2a$10$...`). */
  initSecretHash(signal?: AbortSignal): Promise<string>;
  uid(signal?: AbortSignal): Promise<string>;
}

/** Codes of metadata failures. */
export type MetadataErrorCode =
  | 'METADATA_UNAVAILABLE'
  | 'METADATA_NOT_FOUND'
  | 'METADATA_MALFORMED'
  /** The cloud's metadata endpoint never answered: the node is not on that cloud (or its network is broken). */
  | 'METADATA_ENDPOINT_ABSENT';

/** The platform's metadata could not be read or made no sense. */
export class MetadataError extends AsterismError<MetadataErrorCode> {}

/** Parses a role string like the reference's nodestate/role JSON (case-insensitive, dashes allowed). */
export function parseRole(value: unknown): Role {
  if (typeof value !== 'string') return 'Unknown';
  switch (value.toLowerCase()) {
    case 'controlplane':
    case 'control-plane':
      return 'ControlPlane';
    case 'worker':
      return 'Worker';
    default:
      return 'Unknown';
  }
}

/** Validates and normalises one decoded instance object. */
export function toInstance(raw: unknown, where: string): InstanceMetadata {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new MetadataError('METADATA_MALFORMED', `${where}: expected an instance object`);
  }
  const o = raw as Record<string, unknown>;
  const str = (k: string) => {
    const v = o[k];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new MetadataError('METADATA_MALFORMED', `${where}: field ${k} must be a string`, { details: { field: k } });
    return v;
  };
  const alias = o.AliasIPRanges;
  if (alias !== undefined && alias !== null && (!Array.isArray(alias) || alias.some((a) => typeof a !== 'string'))) {
    throw new MetadataError('METADATA_MALFORMED', `${where}: AliasIPRanges must be a list of strings`);
  }
  return {
    Name: str('Name'),
    ProviderID: str('ProviderID'),
    Role: parseRole(o.Role),
    VPCIP: str('VPCIP'),
    SecondaryIPRange: str('SecondaryIPRange'),
    AliasIPRanges: (alias as string[] | null | undefined) ?? null,
  };
}
