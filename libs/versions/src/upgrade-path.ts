/**
 * Which Kubernetes versions a running cluster may move to (docs/protocol/upgrade.md "Skew policy"):
 * Kubernetes' version skew policy allows one minor version per upgrade and any patch upgrade within
 * a minor; a downgrade, or a move that skips a minor, is refused. Only versions of the manifest can
 * be targets (each must be installable from hash-checked artifacts).
 */
import { AsterismError } from '@asterism/errors';

/** Why a target version cannot be planned. */
export type UpgradeRefusal = 'UPGRADE_SAME_VERSION' | 'UPGRADE_DOWNGRADE' | 'UPGRADE_SKIPS_MINOR' | 'UPGRADE_NOT_SUPPORTED' | 'VERSION_MALFORMED';

/** A target the skew policy refuses; `details` carry the current and target versions. */
export class UpgradePathError extends AsterismError<UpgradeRefusal> {}

/** A parsed `v<major>.<minor>.<patch>`. */
export interface KubeVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Canonical text, `v1.35.4`. */
  readonly text: string;
}

/** Parses `v1.35.4` or `1.35.4` (a kubelet's `v1.35.4` report too); anything else is VERSION_MALFORMED. */
export function parseKubeVersion(text: string): KubeVersion {
  const m = /^v?(\d{1,3})\.(\d{1,3})\.(\d{1,4})$/.exec(text.trim());
  if (!m) throw new UpgradePathError('VERSION_MALFORMED', `"${text}" is not a Kubernetes version (v<major>.<minor>.<patch>)`, { details: { version: text } });
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return { major, minor, patch, text: `v${major}.${minor}.${patch}` };
}

/** Negative, zero or positive as `a` is older than, equal to or newer than `b`. */
export function compareKubeVersions(a: KubeVersion, b: KubeVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/**
 * Checks one move from `current` to `target` among `supported`; returns the parsed target or
 * throws an UpgradePathError saying why not.
 */
export function checkUpgradePath(current: string, target: string, supported: readonly string[]): KubeVersion {
  const from = parseKubeVersion(current);
  const to = parseKubeVersion(target);
  const details = { current: from.text, target: to.text };
  if (!supported.includes(to.text)) {
    throw new UpgradePathError('UPGRADE_NOT_SUPPORTED', `${to.text} is not a supported Kubernetes version; supported: ${supported.join(', ')}`, { details: { ...details, supported: [...supported] } });
  }
  const order = compareKubeVersions(to, from);
  if (order === 0) throw new UpgradePathError('UPGRADE_SAME_VERSION', `the cluster already runs ${from.text}`, { details });
  if (order < 0) throw new UpgradePathError('UPGRADE_DOWNGRADE', `${to.text} is older than the cluster's ${from.text}: Kubernetes cannot be downgraded`, { details });
  if (to.major !== from.major || to.minor > from.minor + 1) {
    throw new UpgradePathError('UPGRADE_SKIPS_MINOR', `${from.text} -> ${to.text} skips a minor version: upgrade one minor at a time (next: v${from.major}.${from.minor + 1}.x)`, { details });
  }
  return to;
}

/** Every supported version `current` may move to in one step, oldest first. */
export function upgradeTargets(current: string, supported: readonly string[]): string[] {
  const ok: KubeVersion[] = [];
  for (const v of supported) {
    try {
      ok.push(checkUpgradePath(current, v, supported));
    } catch (err) {
      if (!(err instanceof UpgradePathError)) throw err;
    }
  }
  return ok.sort(compareKubeVersions).map((v) => v.text);
}
