/**
 * Azure SEV-SNP ID-key digest policy (docs/protocol/attestation-config.md): the accepted digests and what happens when
 * the reported digest is not among them.
 */
import { decodeHex, jsonType } from '../measurements/measurement.js';
import type { FieldReader } from './fields.js';
import type { IdKeyDigestEnforcement, SnpFirmwareSignerConfig } from './types.js';

/** The reference's default accepted ID-key digest for Azure. */
export const DEFAULT_ACCEPTED_KEY_DIGESTS: readonly string[] = ['0356215882a825279a85b300b0b742931d113bf7e32dde2e50ffde7ec743ca491ecdd7f336dc28a6e0b2bb57af7a44a3'];

/** Hex length of one digest (48 bytes). */
const DIGEST_HEX_LENGTH = 96;

const POLICIES: Record<string, IdKeyDigestEnforcement> = { equal: 'Equal', maafallback: 'MAAFallback', warnonly: 'WarnOnly' };

/**
 * Parses an enforcement policy: `"Equal" | "MAAFallback" | "WarnOnly"` in any case, or a legacy
 * boolean (`true` -> Equal, `false` -> WarnOnly).
 */
export function decodeEnforcementPolicy(r: FieldReader, value: unknown, path: string): IdKeyDigestEnforcement {
  if (typeof value === 'boolean') return value ? 'Equal' : 'WarnOnly';
  if (typeof value !== 'string') throw r.fail(path, `expected "Equal", "MAAFallback" or "WarnOnly", got ${jsonType(value)}`);
  const policy = POLICIES[value.toLowerCase()];
  if (!policy) throw r.fail(path, `unknown enforcement policy ${JSON.stringify(value)}: expected "Equal", "MAAFallback" or "WarnOnly"`);
  return policy;
}

/**
 * Parses the accepted digest list: an array of 96-character hex strings (a single string is the
 * legacy one-element form; `null` is empty). A wrong length fails with `invalid digest length`.
 */
export function decodeKeyDigests(r: FieldReader, value: unknown, path: string): Buffer[] {
  if (value === null || value === undefined) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) throw r.fail(path, `expected an array of hex strings, got ${jsonType(value)}`);
  return list.map((item, i) => {
    const at = typeof value === 'string' ? path : `${path}[${i}]`;
    if (typeof item !== 'string') throw r.fail(at, `expected a hex string, got ${jsonType(item)}`);
    if (item.length !== DIGEST_HEX_LENGTH) throw r.fail(at, `invalid digest length: ${item.length}`);
    const digest = decodeHex(item);
    if (typeof digest === 'string') throw r.fail(at, `decoding digest: ${digest}`);
    return digest;
  });
}

/** Decodes `firmwareSignerConfig`; `enforcementPolicy` is required (absent/null rejected). */
export function decodeFirmwareSignerConfig(r: FieldReader, value: unknown, path: string): SnpFirmwareSignerConfig {
  const obj = r.object(value, path);
  return {
    acceptedKeyDigests: decodeKeyDigests(r, r.get(obj, 'acceptedKeyDigests'), `${path}.acceptedKeyDigests`),
    enforcementPolicy: decodeEnforcementPolicy(r, r.required(obj, 'enforcementPolicy', `${path}.enforcementPolicy`), `${path}.enforcementPolicy`),
    maaURL: r.string(r.get(obj, 'maaURL'), `${path}.maaURL`),
  };
}

/**
 * Go JSON of `firmwareSignerConfig`: digests as lower-case hex (lengths not re-checked), the
 * policy name, `maaURL` only when set.
 */
export function encodeFirmwareSignerConfig(c: SnpFirmwareSignerConfig, str: (s: string) => string): string {
  const digests = c.acceptedKeyDigests.map((d) => `"${Buffer.from(d).toString('hex')}"`).join(',');
  const maa = c.maaURL === '' ? '' : `,"maaURL":${str(c.maaURL)}`;
  return `{"acceptedKeyDigests":[${digests}],"enforcementPolicy":"${c.enforcementPolicy}"${maa}}`;
}
