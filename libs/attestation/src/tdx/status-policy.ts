/**
 * The operator's TDX TCB status policy (docs/protocol/tdx-dcap.md "TCB status policy"): which
 * statuses of the converged platform/QE/TDX-module evaluation a validator accepts. The joinservice
 * takes it from `--tdx-accepted-tcb-statuses`; the default accepts what a configuration change or
 * software hardening fixes (ADR 0012).
 */
import { AttestationError } from '../errors.js';
import { TCB_STATUSES, type TcbStatus } from './collateral.js';

/** The TDX validators' operator policy. */
export interface TdxStatusPolicy {
  /** TCB statuses that pass; default DEFAULT_ACCEPTED_TCB_STATUSES. */
  readonly acceptedTcbStatuses?: readonly TcbStatus[];
}

/**
 * Parses a comma-separated list of TCB statuses (names as Intel writes them, any case). The list
 * must name `UpToDate` (a policy refusing current platforms is a mistake) and may not name
 * `Revoked` (the platform's keys are compromised: no policy may accept it). CONFIG_INVALID names
 * the offending entry and the valid names.
 */
export function parseTcbStatuses(list: string): TcbStatus[] {
  const invalid = (message: string, details: Record<string, unknown>) => new AttestationError('CONFIG_INVALID', message, { details: { ...details, valid: TCB_STATUSES.join(',') } });
  const out: TcbStatus[] = [];
  for (const raw of list.split(',').map((s) => s.trim())) {
    const status = TCB_STATUSES.find((s) => s.toLowerCase() === raw.toLowerCase());
    if (!status) throw invalid(`unknown TDX TCB status ${JSON.stringify(raw)} (valid: ${TCB_STATUSES.join(', ')})`, { entry: raw });
    if (status === 'Revoked') throw invalid('TDX TCB status Revoked cannot be accepted: the platform keys are compromised', { entry: raw });
    if (!out.includes(status)) out.push(status);
  }
  if (!out.includes('UpToDate')) throw invalid(`the accepted TDX TCB statuses must include UpToDate (got ${out.join(', ')})`, { entry: list });
  return out;
}
