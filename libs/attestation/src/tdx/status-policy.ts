/**
 * The operator's TDX TCB status policy (docs/protocol/tdx-dcap.md "TCB status policy"): which
 * statuses of the converged platform/QE/TDX-module evaluation a validator accepts. The joinservice
 * takes it from `--tdx-accepted-tcb-statuses`; the default accepts what a configuration change or
 * software hardening fixes (ADR 0012).
 */
import { AttestationError } from '../errors.js';
import { TCB_STATUSES } from './collateral.js';
import type { TcbVerdictStatus } from './tcb.js';

/** Every status a verdict can carry: Intel's TCB statuses and the TD 1.5 relaunch advice. */
export const VERDICT_STATUSES: readonly TcbVerdictStatus[] = [...TCB_STATUSES, 'TDRelaunchAdvised', 'TDRelaunchAdvisedConfigurationNeeded'];

/** The TDX validators' operator policy. */
export interface TdxStatusPolicy {
  /** TCB statuses that pass; default DEFAULT_ACCEPTED_TCB_STATUSES. */
  readonly acceptedTcbStatuses?: readonly TcbVerdictStatus[];
}

/**
 * Parses a comma-separated list of TCB statuses (names as Intel writes them, any case). The list
 * must name `UpToDate` (a policy refusing current platforms is a mistake) and may not name
 * `Revoked` (the platform's keys are compromised: no policy may accept it). The TD 1.5 relaunch
 * advice (`TDRelaunchAdvised`, `TDRelaunchAdvisedConfigurationNeeded`) may be listed; the default
 * does not accept it. CONFIG_INVALID names
 * the offending entry and the valid names.
 */
export function parseTcbStatuses(list: string): TcbVerdictStatus[] {
  const invalid = (message: string, details: Record<string, unknown>) => new AttestationError('CONFIG_INVALID', message, { details: { ...details, valid: VERDICT_STATUSES.join(',') } });
  const out: TcbVerdictStatus[] = [];
  for (const raw of list.split(',').map((s) => s.trim())) {
    const status = VERDICT_STATUSES.find((s) => s.toLowerCase() === raw.toLowerCase());
    if (!status) throw invalid(`unknown TDX TCB status ${JSON.stringify(raw)} (valid: ${VERDICT_STATUSES.join(', ')})`, { entry: raw });
    if (status === 'Revoked') throw invalid('TDX TCB status Revoked cannot be accepted: the platform keys are compromised', { entry: raw });
    if (!out.includes(status)) out.push(status);
  }
  if (!out.includes('UpToDate')) throw invalid(`the accepted TDX TCB statuses must include UpToDate (got ${out.join(', ')})`, { entry: list });
  return out;
}
