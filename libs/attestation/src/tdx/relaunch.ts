/**
 * The TD 1.5 relaunch rule (docs/protocol/tdx-dcap.md "TD 1.5 bodies"): a TD 1.5 report carries
 * TEE_TCB_SVN (the TDX module the TD was launched under) and TEE_TCB_SVN2 (the module the platform
 * runs now, after a TD-preserving update). When the platform is fine except that the launch module
 * is out of date, and the current module meets the newest TCB level, Intel's rules say the TD
 * only needs a relaunch: the status becomes TDRelaunchAdvised (with ConfigurationNeeded when the
 * platform needs configuration).
 */
import type { TcbStatus, TdxTcbInfo } from './collateral.js';
import { moduleIdentity, moduleMismatch } from './module-identity.js';

/** The statuses the relaunch rule can produce. */
export type RelaunchStatus = 'TDRelaunchAdvised' | 'TDRelaunchAdvisedConfigurationNeeded';

/** The component statuses the rule looks at. */
export interface RelaunchInputs {
  /** Status of the first level the SGX components and PCE SVN meet. */
  sgx: TcbStatus;
  /** Platform (TDX) level status converged with the module status. */
  tdx: TcbStatus;
  module: TcbStatus;
  qe: TcbStatus;
}

const SGX_FINE: ReadonlySet<TcbStatus> = new Set(['UpToDate', 'SWHardeningNeeded', 'ConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded']);
const CONFIGURATION: ReadonlySet<string> = new Set(['ConfigurationNeeded', 'OutOfDateConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded']);

/**
 * `inputs.tdx`, or a relaunch advice when TEE_TCB_SVN2 meets the newest level (module SVN at
 * byte 0 against the newest level's TDX component 0, or against the newest TCB level of the
 * module identity TDX_<SVN2[1]>; byte 2 against the newest level's TDX component 2). An SVN2
 * naming a module the TCB info does not know is TDX_MODULE_MISMATCH.
 */
export function checkForRelaunch(tcbInfo: TdxTcbInfo, svn2: Buffer, inputs: RelaunchInputs): TcbStatus | RelaunchStatus {
  if (inputs.qe === 'OutOfDate' || inputs.qe === 'Revoked') return inputs.tdx;
  if (!SGX_FINE.has(inputs.sgx)) return inputs.tdx;
  if (inputs.tdx !== 'OutOfDate' && inputs.tdx !== 'OutOfDateConfigurationNeeded') return inputs.tdx;
  if (inputs.module !== 'OutOfDate') return inputs.tdx;
  const latest = tcbInfo.tcbLevels[0];
  if (!latest) return inputs.tdx;
  let moduleSvnNeeded: number;
  if (svn2[1] === 0) {
    moduleSvnNeeded = latest.tdxComponents[0]!;
  } else {
    const identity = moduleIdentity(tcbInfo, svn2[1]!);
    if (!identity) throw moduleMismatch(svn2[1]!, 'TEE_TCB_SVN2');
    const newest = identity.tcbLevels[0];
    if (!newest) return inputs.tdx;
    moduleSvnNeeded = newest.isvSvn;
  }
  if (svn2[0]! < moduleSvnNeeded || svn2[2]! < latest.tdxComponents[2]!) return inputs.tdx;
  return CONFIGURATION.has(inputs.sgx) || CONFIGURATION.has(inputs.tdx) ? 'TDRelaunchAdvisedConfigurationNeeded' : 'TDRelaunchAdvised';
}
