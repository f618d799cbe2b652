/**
 * TCB evaluation of a TDX quote against its collateral (docs/protocol/tdx-dcap.md): the platform
 * TCB level (SGX components + PCE SVN from the PCK certificate, TDX components from the quote),
 * the TDX module identity, the QE identity, the TD 1.5 relaunch rule (TEE_TCB_SVN2), and the
 * converged status.
 */
import { AttestationError } from '../errors.js';
import type { QeIdentity, TcbStatus, TdxTcbInfo, TdxTcbLevel } from './collateral.js';
import type { PckTcb } from './pck.js';
import type { QeReport, TdReportBody } from './quote.js';
import { moduleIdentity, moduleMismatch } from './module-identity.js';
import { checkForRelaunch, type RelaunchStatus } from './relaunch.js';

/** A verdict status: one of Intel's TCB statuses, or a TD 1.5 relaunch advice. */
export type TcbVerdictStatus = TcbStatus | RelaunchStatus;

/** Outcome of the TCB evaluation. */
export interface TcbEvaluation {
  /** The converged status the policy decides on. */
  status: TcbVerdictStatus;
  platformStatus: TcbStatus;
  qeStatus: TcbStatus;
  /** Status of the TDX module identity level (undefined when the collateral has none for it). */
  moduleStatus: TcbStatus | undefined;
  /**
   * TD 1.5 bodies: true when the TD runs on an out-of-date module it launched under while the
   * platform's current module (TEE_TCB_SVN2) is up to date: relaunching the TD fixes it.
   * Absent means false.
   */
  relaunchAdvised?: boolean;
  tcbDate: string;
  advisoryIds: string[];
}

/** Evaluates platform, module and QE TCB and converges them into one status. */
export function evaluateTcb(tcbInfo: TdxTcbInfo, qeIdentity: QeIdentity, pck: PckTcb, body: TdReportBody, qe: QeReport): TcbEvaluation {
  const level = matchPlatformLevel(tcbInfo, pck, body);
  const moduleStatus = matchModule(tcbInfo, body);
  const qeStatus = matchQeIdentity(qeIdentity, qe);
  const tdx = moduleStatus ? converge(level.tcbStatus, moduleStatus) : level.tcbStatus;
  const sgx = () => matchSgxLevel(tcbInfo, pck)?.tcbStatus ?? level.tcbStatus;
  const afterRelaunch = body.teeTcbSvn2 && moduleStatus ? checkForRelaunch(tcbInfo, body.teeTcbSvn2, { sgx: sgx(), tdx, module: moduleStatus, qe: qeStatus }) : tdx;
  const relaunchAdvised = afterRelaunch !== tdx;
  const status = relaunchAdvised ? afterRelaunch : converge(tdx, qeStatus);
  return { status, platformStatus: level.tcbStatus, qeStatus, moduleStatus, relaunchAdvised, tcbDate: level.tcbDate, advisoryIds: level.advisoryIds };
}

/** The first level whose SGX components and PCE SVN the platform meets (TDX components not considered). */
export function matchSgxLevel(tcbInfo: TdxTcbInfo, pck: PckTcb): TdxTcbLevel | undefined {
  return tcbInfo.tcbLevels.find((l) => l.pceSvn <= pck.pceSvn && l.sgxComponents.every((svn, i) => pck.sgxComponents[i]! >= svn));
}

/** The first (highest) TCB level the platform meets. */
export function matchPlatformLevel(tcbInfo: TdxTcbInfo, pck: PckTcb, body: TdReportBody): TdxTcbLevel {
  // With a TDX module major version (byte 1) set, bytes 0 and 1 describe the module and are
  // evaluated through the module identity instead.
  const first = body.teeTcbSvn[1]! > 0 && tcbInfo.moduleIdentities.length > 0 ? 2 : 0;
  const level = tcbInfo.tcbLevels.find((l) => shortfalls(l, pck, body, first).length === 0);
  if (!level) {
    // The last level is the lowest Intel lists: name every component below it.
    const lowest = tcbInfo.tcbLevels.at(-1);
    const below = lowest ? shortfalls(lowest, pck, body, first) : [];
    throw new AttestationError(
      'TCB_LEVEL_NOT_FOUND',
      `no TCB level of FMSPC ${tcbInfo.fmspc.toString('hex')} is met by the platform (SGX ${pck.sgxComponents.join(',')}, PCE SVN ${pck.pceSvn}, TEE TCB SVN ${body.teeTcbSvn.toString('hex')}; below the lowest level: ${below.join(', ') || 'none'})`,
      {
        details: {
          check: 'platform-tcb',
          sgxComponents: pck.sgxComponents,
          pceSvn: pck.pceSvn,
          teeTcbSvn: body.teeTcbSvn.toString('hex'),
          lowestLevel: lowest ? { sgxComponents: lowest.sgxComponents, pceSvn: lowest.pceSvn, tdxComponents: lowest.tdxComponents, tcbDate: lowest.tcbDate } : undefined,
          belowLowestLevel: below,
        },
      },
    );
  }
  return level;
}

/** The components of the platform below `level` (`sgx[i] have < need`, `pceSvn …`, `tdx[i] …`). */
function shortfalls(level: TdxTcbLevel, pck: PckTcb, body: TdReportBody, firstTdx: number): string[] {
  const out: string[] = [];
  level.sgxComponents.forEach((svn, i) => {
    if (pck.sgxComponents[i]! < svn) out.push(`sgx[${i}] ${pck.sgxComponents[i]} < ${svn}`);
  });
  if (pck.pceSvn < level.pceSvn) out.push(`pceSvn ${pck.pceSvn} < ${level.pceSvn}`);
  level.tdxComponents.forEach((svn, i) => {
    if (i >= firstTdx && body.teeTcbSvn[i]! < svn) out.push(`tdx[${i}] ${body.teeTcbSvn[i]} < ${svn}`);
  });
  return out;
}

function matchModule(tcbInfo: TdxTcbInfo, body: TdReportBody): TcbStatus | undefined {
  const major = body.teeTcbSvn[1]!;
  const identity = major > 0 ? moduleIdentity(tcbInfo, major) : undefined;
  const expected = identity ?? tcbInfo.tdxModule;
  if (expected) {
    checkSigner('MRSIGNERSEAM', expected.mrSigner, body.mrSignerSeam);
    checkMasked('SEAM attributes', expected.attributes, expected.attributesMask, body.seamAttributes);
  }
  if (!identity) {
    if (major > 0 && tcbInfo.moduleIdentities.length > 0) {
      throw moduleMismatch(major, 'TEE_TCB_SVN');
    }
    return undefined;
  }
  const level = identity.tcbLevels.find((l) => body.teeTcbSvn[0]! >= l.isvSvn);
  if (!level) {
    throw new AttestationError('TCB_LEVEL_NOT_FOUND', `TDX module ${identity.id} SVN ${body.teeTcbSvn[0]} is below every TCB level`, { details: { check: 'tdx-module', svn: body.teeTcbSvn[0] } });
  }
  return level.tcbStatus;
}

/** Checks the QE report against the QE identity; returns the QE's TCB status. */
export function matchQeIdentity(identity: QeIdentity, qe: QeReport): TcbStatus {
  const mismatch = (field: string, expected: string, actual: string): never => {
    throw new AttestationError('QE_IDENTITY_MISMATCH', `QE report ${field} ${actual} does not match the QE identity (${expected})`, { details: { field, expected, actual } });
  };
  if (((qe.miscSelect & identity.miscSelectMask) >>> 0) !== ((identity.miscSelect & identity.miscSelectMask) >>> 0)) {
    mismatch('MISCSELECT', identity.miscSelect.toString(16), qe.miscSelect.toString(16));
  }
  const attrs = mask(qe.attributes, identity.attributesMask);
  if (!attrs.equals(mask(identity.attributes, identity.attributesMask))) mismatch('ATTRIBUTES', identity.attributes.toString('hex'), qe.attributes.toString('hex'));
  if (!qe.mrSigner.equals(identity.mrSigner)) mismatch('MRSIGNER', identity.mrSigner.toString('hex'), qe.mrSigner.toString('hex'));
  if (qe.isvProdId !== identity.isvProdId) mismatch('ISVPRODID', String(identity.isvProdId), String(qe.isvProdId));
  const level = identity.tcbLevels.find((l) => qe.isvSvn >= l.isvSvn);
  if (!level) throw new AttestationError('TCB_LEVEL_NOT_FOUND', `QE ISV SVN ${qe.isvSvn} is below every QE identity TCB level`, { details: { check: 'qe-tcb', isvSvn: qe.isvSvn } });
  return level.tcbStatus;
}

/** Refuses a TCB evaluation whose converged status is not accepted (TCB_STATUS_REJECTED). */
export function applyStatusPolicy(tcb: TcbEvaluation, accepted: ReadonlySet<TcbVerdictStatus>): void {
  if (!accepted.has(tcb.status)) {
    throw new AttestationError('TCB_STATUS_REJECTED', `TCB status ${tcb.status} is not accepted (accepted: ${[...accepted].join(', ')})`, {
      details: { status: tcb.status, platformStatus: tcb.platformStatus, qeStatus: tcb.qeStatus, moduleStatus: tcb.moduleStatus, relaunchAdvised: tcb.relaunchAdvised, tcbDate: tcb.tcbDate, advisoryIds: tcb.advisoryIds },
    });
  }
}

/** Folds a component's status (QE or TDX module) into the platform status. */
export function converge(platform: TcbStatus, component: TcbStatus): TcbStatus {
  if (component === 'Revoked' || platform === 'Revoked') return 'Revoked';
  if (component !== 'OutOfDate') return platform;
  if (platform === 'ConfigurationNeeded' || platform === 'ConfigurationAndSWHardeningNeeded' || platform === 'OutOfDateConfigurationNeeded') return 'OutOfDateConfigurationNeeded';
  return 'OutOfDate';
}

function checkSigner(field: string, expected: Buffer, actual: Buffer): void {
  if (!expected.equals(actual)) {
    throw new AttestationError('COLLATERAL_MISMATCH', `quote ${field} ${actual.toString('hex')} is not the TDX module signer of the TCB info (${expected.toString('hex')})`, {
      details: { field, expected: expected.toString('hex'), actual: actual.toString('hex') },
    });
  }
}

function checkMasked(field: string, expected: Buffer, m: Buffer, actual: Buffer): void {
  if (!mask(actual, m).equals(mask(expected, m))) {
    throw new AttestationError('COLLATERAL_MISMATCH', `quote ${field} ${actual.toString('hex')} do not match the TCB info (${expected.toString('hex')} under mask ${m.toString('hex')})`, {
      details: { field, expected: expected.toString('hex'), actual: actual.toString('hex') },
    });
  }
}

function mask(value: Buffer, m: Buffer): Buffer {
  return Buffer.from(value.map((b, i) => b & (m[i] ?? 0)));
}
