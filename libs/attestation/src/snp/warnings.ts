/**
 * Early warnings (beyond the reference): a node whose evidence verifies today but will be refused
 * soon - a certificate of its chain expires, or a configured upcoming minimum TCB takes effect -
 * is reported to a sink (the joinservice turns it into a metric and a log warning) while it still
 * joins, so operators act before nodes fail.
 */
import type { AmdCertificate, SignerCertificate } from './certs.js';
import type { SnpReport } from './report.js';
import { firstComponentBelow, formatTcb, tcbComponent, tcbDetails, type TcbVersion } from './tcb.js';

/** A minimum TCB that becomes enforced at `effectiveAt` (and is warned about before). */
export interface UpcomingTcbMinimum {
  readonly tcb: TcbVersion;
  readonly effectiveAt: Date;
}

/** One finding: what will refuse the node, and when. */
export interface SnpRefusalRisk {
  readonly kind: 'certificate-expiry' | 'tcb-minimum';
  /** Certificate role (ARK, ASK, VCEK, ...) or the TCB field below the upcoming minimum. */
  readonly subject: string;
  readonly refusedAt: Date;
  readonly daysLeft: number;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

/** Receives refusal risks; must not throw. */
export type SnpWarningSink = (risk: SnpRefusalRisk) => void;

/** Warning settings of a validator. */
export interface SnpWarningOptions {
  /** Report risks that materialise within this many days (default 30). */
  readonly withinDays: number;
  readonly upcomingMinimumTcb?: UpcomingTcbMinimum;
  readonly sink: SnpWarningSink;
}

const DAY_MS = 86_400_000;

/** The minimum TCB in force at `now`: the configured one, raised by an upcoming one once effective. */
export function effectiveMinimumTcb(configured: TcbVersion | undefined, upcoming: UpcomingTcbMinimum | undefined, now: Date): TcbVersion | undefined {
  if (!upcoming || now < upcoming.effectiveAt) return configured;
  if (!configured) return upcoming.tcb;
  return {
    bootloader: Math.max(configured.bootloader, upcoming.tcb.bootloader),
    tee: Math.max(configured.tee, upcoming.tcb.tee),
    snp: Math.max(configured.snp, upcoming.tcb.snp),
    microcode: Math.max(configured.microcode, upcoming.tcb.microcode),
  };
}

/** Every risk within the window for a verified report and its chain. */
export function refusalRisks(
  v: { report: SnpReport; signer: SignerCertificate; ask: AmdCertificate; ark: AmdCertificate },
  now: Date,
  options: Pick<SnpWarningOptions, 'withinDays' | 'upcomingMinimumTcb'>,
): SnpRefusalRisk[] {
  const horizon = now.getTime() + options.withinDays * DAY_MS;
  const risks: SnpRefusalRisk[] = [];
  const role = v.signer.kind.toUpperCase();
  for (const [name, cert] of [
    [role, v.signer],
    [v.signer.kind === 'vcek' ? 'ASK' : 'ASVK', v.ask],
    ['ARK', v.ark],
  ] as const) {
    if (cert.notAfter.getTime() <= horizon) {
      const daysLeft = Math.max(0, Math.floor((cert.notAfter.getTime() - now.getTime()) / DAY_MS));
      risks.push({
        kind: 'certificate-expiry',
        subject: name,
        refusedAt: cert.notAfter,
        daysLeft,
        message: `${name} ${cert.subjectCn} expires on ${cert.notAfter.toISOString()} (${daysLeft} days): nodes signed through it will be refused`,
        details: { certificate: name, fingerprint: cert.fingerprint, notAfter: cert.notAfter.toISOString() },
      });
    }
  }
  const upcoming = options.upcomingMinimumTcb;
  if (upcoming && upcoming.effectiveAt > now && upcoming.effectiveAt.getTime() <= horizon) {
    const daysLeft = Math.floor((upcoming.effectiveAt.getTime() - now.getTime()) / DAY_MS);
    for (const [field, tcb] of [
      ['REPORTED_TCB', v.report.reportedTcb],
      ['CURRENT_TCB', v.report.currentTcb],
      ['COMMITTED_TCB', v.report.committedTcb],
    ] as const) {
      const below = firstComponentBelow(tcb, upcoming.tcb);
      if (!below) continue;
      risks.push({
        kind: 'tcb-minimum',
        subject: field,
        refusedAt: upcoming.effectiveAt,
        daysLeft,
        message: `${field} ${formatTcb(tcb)} is below the minimum TCB ${formatTcb(upcoming.tcb)} that takes effect on ${upcoming.effectiveAt.toISOString()} (${daysLeft} days; ${below} ${tcbComponent(tcb, below)} < ${tcbComponent(upcoming.tcb, below)})`,
        details: { field, component: below, actual: tcbDetails(tcb), upcoming: tcbDetails(upcoming.tcb), effectiveAt: upcoming.effectiveAt.toISOString() },
      });
      break;
    }
  }
  return risks;
}
