/**
 * Asterism's optional attestation config keys for current-generation evidence (issue 28;
 * docs/protocol/attestation-config.md "Current-generation extensions"). All are absent by default
 * and then written back absent, so configs stay byte-identical to the reference's.
 *
 * - SEV-SNP variants: `minimumReportVersion` (2-5), `requiredLaunchMitigations`,
 *   `requiredCurrentMitigations` (u64 bit masks as hex strings, `"0x3f"` or `"3f"`).
 * - qemu-tdx: `mrServiceTd` (48 bytes hex), the MRSERVICETD a TD 1.5 quote must carry.
 */
import type { FieldReader } from './fields.js';

/** The SNP keys. */
export interface SnpReportRequirements {
  minimumReportVersion?: number;
  requiredLaunchMitigations?: bigint;
  requiredCurrentMitigations?: bigint;
}

function mask(r: FieldReader, value: unknown, path: string): bigint {
  const s = r.string(value, path).trim();
  if (!/^(0x)?[0-9a-fA-F]{1,16}$/.test(s)) throw r.fail(path, `expected a 64-bit mask as hex (e.g. "0x3f"), got ${JSON.stringify(s)}`);
  return BigInt(s.startsWith('0x') ? s : `0x${s}`);
}

/** Reads the SNP keys (CONFIG_INVALID naming the key when malformed). */
export function decodeSnpReportRequirements(r: FieldReader, obj: Record<string, unknown>): SnpReportRequirements {
  const out: SnpReportRequirements = {};
  const version = r.get(obj, 'minimumReportVersion');
  if (version !== undefined && version !== null) {
    const v = r.uint(version, 5, 'minimumReportVersion');
    if (v < 2) throw r.fail('minimumReportVersion', `expected 2 to 5, got ${v}`);
    out.minimumReportVersion = v;
  }
  for (const key of ['requiredLaunchMitigations', 'requiredCurrentMitigations'] as const) {
    const raw = r.get(obj, key);
    if (raw !== undefined && raw !== null && raw !== '') out[key] = mask(r, raw, key);
  }
  return out;
}

/** The SNP keys as JSON members (leading comma each), only those set. */
export function encodeSnpReportRequirements(c: SnpReportRequirements): string {
  let out = '';
  if (c.minimumReportVersion !== undefined) out += `,"minimumReportVersion":${c.minimumReportVersion}`;
  if (c.requiredLaunchMitigations !== undefined) out += `,"requiredLaunchMitigations":"0x${c.requiredLaunchMitigations.toString(16)}"`;
  if (c.requiredCurrentMitigations !== undefined) out += `,"requiredCurrentMitigations":"0x${c.requiredCurrentMitigations.toString(16)}"`;
  return out;
}

/** Reads qemu-tdx `mrServiceTd` (48 bytes; absent or empty = not pinned). */
export function decodeMrServiceTd(r: FieldReader, obj: Record<string, unknown>): Buffer | undefined {
  const raw = r.get(obj, 'mrServiceTd');
  if (raw === undefined || raw === null || raw === '') return undefined;
  const b = r.hex(raw, 'mrServiceTd', 48);
  return b.length === 0 ? undefined : b;
}
