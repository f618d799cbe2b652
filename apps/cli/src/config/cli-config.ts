import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { AsterismError } from '@asterism/errors';

/** A problem with flags or the config file; the message names the flag or key. */
export class ConfigError extends AsterismError<'CONFIG_INVALID' | 'CONFIG_MISSING'> {}

/** The CLI's config file (`asterism-conf.yaml`); every key has a flag of the same meaning. */
export interface CliConfig {
  clusterName?: string;
  kubernetesVersion?: string;
  /** Where the node fetches the Kubernetes components from (http, https or file URL; docs/protocol/components.md). */
  artifactBaseURL?: string;
  apiServerCertSANs?: string[];
  serviceCIDR?: string;
  initSecretFile?: string;
  attestation?: {
    variant?: string;
    /** JSON attestation config of the variant (expected measurements...), relative to the config file. */
    configFile?: string;
  };
}

export const DEFAULT_CONFIG_FILE = 'asterism-conf.yaml';

const TOP_KEYS = new Set(['clusterName', 'kubernetesVersion', 'artifactBaseURL', 'apiServerCertSANs', 'serviceCIDR', 'initSecretFile', 'attestation']);
const ATTESTATION_KEYS = new Set(['variant', 'configFile']);

function str(v: unknown, key: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ConfigError('CONFIG_INVALID', `config key "${key}" must be a string`);
  return v;
}

/**
 * Parses the config file. Unknown keys are errors (a typo must not silently fall back to a
 * default); relative file paths are resolved against the config file's folder.
 */
export function parseCliConfig(text: string, path: string): CliConfig {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new ConfigError('CONFIG_INVALID', `${path}: not valid YAML: ${(err as Error).message}`);
  }
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError('CONFIG_INVALID', `${path}: must be a mapping`);
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!TOP_KEYS.has(k)) throw new ConfigError('CONFIG_INVALID', `${path}: unknown key "${k}" (known: ${[...TOP_KEYS].join(', ')})`);
  const base = dirname(path);
  const rel = (p: string | undefined) => (p === undefined ? undefined : resolve(base, p));
  const cfg: CliConfig = {};
  const set = <K extends keyof CliConfig>(k: K, v: CliConfig[K] | undefined) => {
    if (v !== undefined) cfg[k] = v;
  };
  set('clusterName', str(o.clusterName, 'clusterName'));
  set('kubernetesVersion', str(o.kubernetesVersion, 'kubernetesVersion'));
  set('artifactBaseURL', str(o.artifactBaseURL, 'artifactBaseURL'));
  set('serviceCIDR', str(o.serviceCIDR, 'serviceCIDR'));
  set('initSecretFile', rel(str(o.initSecretFile, 'initSecretFile')));
  if (o.apiServerCertSANs !== undefined && o.apiServerCertSANs !== null) {
    if (!Array.isArray(o.apiServerCertSANs) || o.apiServerCertSANs.some((s) => typeof s !== 'string')) {
      throw new ConfigError('CONFIG_INVALID', `${path}: "apiServerCertSANs" must be a list of strings`);
    }
    cfg.apiServerCertSANs = o.apiServerCertSANs as string[];
  }
  if (o.attestation !== undefined && o.attestation !== null) {
    if (typeof o.attestation !== 'object' || Array.isArray(o.attestation)) throw new ConfigError('CONFIG_INVALID', `${path}: "attestation" must be a mapping`);
    const a = o.attestation as Record<string, unknown>;
    for (const k of Object.keys(a)) if (!ATTESTATION_KEYS.has(k)) throw new ConfigError('CONFIG_INVALID', `${path}: unknown key "attestation.${k}" (known: ${[...ATTESTATION_KEYS].join(', ')})`);
    const att: NonNullable<CliConfig['attestation']> = {};
    const variant = str(a.variant, 'attestation.variant');
    const file = rel(str(a.configFile, 'attestation.configFile'));
    if (variant !== undefined) att.variant = variant;
    if (file !== undefined) att.configFile = file;
    cfg.attestation = att;
  }
  return cfg;
}

/** Loads the config file; a missing default file is fine, a missing explicit one is an error. */
export async function loadCliConfig(path: string | undefined): Promise<CliConfig> {
  const file = path ?? DEFAULT_CONFIG_FILE;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (path === undefined && (err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError('CONFIG_MISSING', `reading config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseCliConfig(text, resolve(file));
}
