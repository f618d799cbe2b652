/**
 * The flags of the validators' outside sources (docs/protocol/continuous-attestation.md,
 * docs/protocol/tdx-dcap.md): every service that validates nodes with the cluster's attestation
 * config (the joinservice, the attestation monitor) takes the same ones, so a cluster's collateral
 * policy is stated once.
 */
import { AttestationError, parseTcbStatuses, type TcbVerdictStatus, type UpcomingTcbMinimum, type Variant } from '@asterism/attestation';
import { FlagError } from '@asterism/service-runtime';

/** What the sources are built from: the variant and the collateral and cloud flags. */
export interface ValidatorSourceConfig {
  readonly variant: Variant;
  /** Base URL of the cloud API (EC2/ELBv2, ARM, Compute Engine) instead of the real one (tests). */
  readonly cloudApiUrl: string | undefined;
  /** Never contact vendor collateral services (Intel PCS, AMD KDS); serve persisted or configured collateral only. */
  readonly collateralOffline: boolean;
  /** AMD KDS base URL for SEV-SNP collateral (mirrors, tests); undefined = AMD's. */
  readonly amdKdsUrl: string | undefined;
  /** Intel PCS base URL for TDX collateral (a caching service, mirrors, tests); undefined = Intel's. */
  readonly intelPcsUrl: string | undefined;
  /** Intel SGX Root CA CRL URL (mirrors, tests); undefined = Intel's distribution point. */
  readonly intelRootCrlUrl: string | undefined;
  /** TDX: TCB statuses the validators accept (docs/protocol/tdx-dcap.md); undefined = the default set. */
  readonly tdxAcceptedTcbStatuses: TcbVerdictStatus[] | undefined;
  /** SEV-SNP: a minimum TCB that takes effect at a date (warned about 30 days before, then enforced). */
  readonly snpUpcomingMinimumTcb: UpcomingTcbMinimum | undefined;
}

/** The flags' `parseGoFlags` options. */
export const SOURCE_FLAG_OPTIONS = {
  'cloud-api-url': { type: 'string' },
  'collateral-offline': { type: 'boolean' },
  'amd-kds-url': { type: 'string' },
  'intel-pcs-url': { type: 'string' },
  'intel-root-crl-url': { type: 'string' },
  'tdx-accepted-tcb-statuses': { type: 'string' },
  'snp-upcoming-minimum-tcb': { type: 'string' },
} as const;

const HELP: ReadonlyArray<readonly [flag: string, text: string]> = [
  ['--collateral-offline', 'TDX/SEV-SNP: use only collateral persisted in ConfigMaps (or configured), never Intel PCS / AMD KDS'],
  ['--amd-kds-url <url>', "SEV-SNP: AMD KDS base URL (default AMD's; a mirror or a local replay)"],
  ['--intel-pcs-url <url>', "TDX: Intel PCS base URL (default Intel's; a caching service with the same paths, a mirror or a local replay)"],
  ['--intel-root-crl-url <url>', "TDX: Intel SGX Root CA CRL URL (default Intel's distribution point)"],
  ['--tdx-accepted-tcb-statuses <list>', 'TDX: comma-separated TCB statuses that pass (must include UpToDate, never Revoked; default UpToDate, SWHardeningNeeded, ConfigurationNeeded, ConfigurationAndSWHardeningNeeded)'],
  ['--snp-upcoming-minimum-tcb <bl.tee.snp.ucode@YYYY-MM-DD>', 'SEV-SNP: minimum TCB from that date (UTC); nodes below it are warned about (log + *_snp_refusal_risks_total) 30 days before'],
];

/**
 * The flags' help lines: two-space indent, descriptions from `column` (a flag too long for it gets
 * a line of its own), wrapped at 100 characters.
 */
export function sourceFlagsUsage(column: number): string {
  const pad = ' '.repeat(column);
  return HELP.map(([flag, text]) => {
    const lines: string[] = [];
    let line = '';
    for (const word of text.split(' ')) {
      if (line && column + line.length + 1 + word.length > 100) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
    const head = `  ${flag}`;
    const first = head.length < column ? `${head.padEnd(column)}${lines[0]}` : `${head}\n${pad}${lines[0]}`;
    return [first, ...lines.slice(1).map((l) => pad + l)].join('\n');
  }).join('\n');
}

type SourceFlagValues = { [K in keyof typeof SOURCE_FLAG_OPTIONS]?: (typeof SOURCE_FLAG_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** Parses the source flags of a parsed command line; a bad value is a FlagError naming the flag. */
export function parseSourceFlags(variant: Variant, values: SourceFlagValues): ValidatorSourceConfig {
  const cloudApiUrl = values['cloud-api-url'];
  if (cloudApiUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(cloudApiUrl)) throw new FlagError(`invalid --cloud-api-url "${cloudApiUrl}": want an http(s) URL`);
  return {
    variant,
    cloudApiUrl,
    collateralOffline: values['collateral-offline'] === true,
    amdKdsUrl: serviceUrl('amd-kds-url', values['amd-kds-url']),
    intelPcsUrl: serviceUrl('intel-pcs-url', values['intel-pcs-url']),
    intelRootCrlUrl: serviceUrl('intel-root-crl-url', values['intel-root-crl-url']),
    tdxAcceptedTcbStatuses: tcbStatuses(values['tdx-accepted-tcb-statuses']),
    snpUpcomingMinimumTcb: upcomingTcb(values['snp-upcoming-minimum-tcb']),
  };
}

/** A vendor service URL flag: http(s), no trailing slash. */
function serviceUrl(flag: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(raw)) throw new FlagError(`invalid --${flag} "${raw}": want an http(s) URL`);
  return raw.replace(/\/$/, '');
}

function tcbStatuses(raw: string | undefined): TcbVerdictStatus[] | undefined {
  if (raw === undefined) return undefined;
  try {
    return parseTcbStatuses(raw);
  } catch (err) {
    if (err instanceof AttestationError) throw new FlagError(`invalid --tdx-accepted-tcb-statuses: ${err.message}`);
    throw err;
  }
}

function upcomingTcb(raw: string | undefined): UpcomingTcbMinimum | undefined {
  if (raw === undefined) return undefined;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})@(\d{4}-\d{2}-\d{2})$/.exec(raw);
  const effectiveAt = m ? new Date(`${m[5]}T00:00:00Z`) : undefined;
  const parts = m ? m.slice(1, 5).map(Number) : [];
  if (!m || !effectiveAt || Number.isNaN(effectiveAt.getTime()) || effectiveAt.toISOString().slice(0, 10) !== m[5] || parts.some((n) => n > 255)) {
    throw new FlagError(`invalid --snp-upcoming-minimum-tcb "${raw}": want bootloader.tee.snp.microcode@YYYY-MM-DD, each version 0-255`);
  }
  const [bootloader, tee, snp, microcode] = parts as [number, number, number, number];
  return { tcb: { bootloader, tee, snp, microcode }, effectiveAt };
}
