/**
 * TDX module identities of a TCB info (docs/protocol/tdx-dcap.md): `TDX_<major>` names the
 * module whose major version TEE_TCB_SVN[1] (or TEE_TCB_SVN2[1]) carries.
 */
import { AttestationError } from '../errors.js';
import type { TdxModuleIdentity, TdxTcbInfo } from './collateral.js';

const idOf = (major: number) => `TDX_${major.toString(16).toUpperCase().padStart(2, '0')}`;

/** TDX_MODULE_MISMATCH: the TCB info names no module identity `TDX_<major>` (Intel: STATUS_TDX_MODULE_MISMATCH). */
export function moduleMismatch(major: number, field: 'TEE_TCB_SVN' | 'TEE_TCB_SVN2'): AttestationError {
  const id = idOf(major);
  return new AttestationError('TDX_MODULE_MISMATCH', `the TCB info has no TDX module identity ${id} (major version ${major} in ${field}[1])`, {
    details: { check: 'tdx-module', field, major, expected: id },
  });
}

/** The module identity `TDX_<major>` of the TCB info, if any. */
export function moduleIdentity(tcbInfo: TdxTcbInfo, major: number): TdxModuleIdentity | undefined {
  return tcbInfo.moduleIdentities.find((m) => m.id.toUpperCase() === idOf(major));
}

