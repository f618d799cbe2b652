/**
 * `asterism version`: the CLI version, the git commit it was built from, the supported Kubernetes
 * versions and the attestation variants it can verify (libs/attestation's variant table, without
 * the test-only `dummy`).
 */
import { parseArgs } from 'node:util';
import { variantDescriptors } from '@asterism/attestation';
import { EXIT, UsageError } from '../usage.js';
import { buildInfo, type BuildInfo } from './build-info.js';
import { supportedKubernetesVersions } from './kubernetes-versions.js';

/** Help text of `asterism version`. */
export const VERSION_USAGE = `Usage: asterism version [-o text|json]

Prints the CLI version, the git commit it was built from, the supported Kubernetes versions and
the attestation variants.

Flags:
  -o, --output <f>   text (default) or json`;

/** Everything `asterism version` reports. */
export interface VersionReport extends BuildInfo {
  kubernetesVersions: string[];
  attestationVariants: string[];
}

/** Attestation variants a user can choose (every variant of the variant table but the insecure `dummy`). */
export function attestationVariants(): string[] {
  return variantDescriptors()
    .filter((d) => !d.insecure)
    .map((d) => d.variant.name)
    .sort();
}

/** Collects the report. */
export async function versionReport(): Promise<VersionReport> {
  return { ...buildInfo(), kubernetesVersions: await supportedKubernetesVersions(), attestationVariants: attestationVariants() };
}

/** The text form: one `name: value` line per field. */
export function formatVersion(r: VersionReport): string {
  return [
    `asterism ${r.version}`,
    `commit:               ${r.commit}`,
    `build:                ${r.build}`,
    `kubernetes versions:  ${r.kubernetesVersions.join(', ')}`,
    `attestation variants: ${r.attestationVariants.join(', ')}`,
  ].join('\n');
}

/** `asterism version [-o text|json]`; returns the exit code. */
export async function versionCommand(argv: string[], out: { stdout: (s: string) => void }): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { output: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    out.stdout(`${VERSION_USAGE}\n`);
    return EXIT.ok;
  }
  const format = values.output ?? 'text';
  if (format !== 'text' && format !== 'json') throw new UsageError(`unknown --output "${format}": want text or json`);
  const report = await versionReport();
  out.stdout(format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : `${formatVersion(report)}\n`);
  return EXIT.ok;
}
