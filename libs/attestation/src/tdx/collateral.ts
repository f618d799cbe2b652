/**
 * DCAP collateral for TDX (docs/protocol/tdx-dcap.md): the signed TCB info and QE identity JSON
 * documents served by Intel PCS, their issuer chains, and the CRLs. Parsed into validated
 * objects; the signed member is kept byte for byte, since the signature covers its raw text.
 */
import { AttestationError } from '../errors.js';

/** Raw collateral as a PCS client or cache returns it. */
export interface DcapCollateral {
  /** TCB info response body `{"tcbInfo":{…},"signature":"…"}`. */
  tcbInfo: string;
  /** PEM: TCB signing certificate, then Intel SGX Root CA. */
  tcbInfoIssuerChain: string;
  /** QE identity response body `{"enclaveIdentity":{…},"signature":"…"}`. */
  qeIdentity: string;
  qeIdentityIssuerChain: string;
  /** DER CRL of the CA that issued the PCK certificate. */
  pckCrl: Uint8Array;
  pckCrlIssuerChain: string;
  /** DER CRL of the Intel SGX Root CA. */
  rootCrl: Uint8Array;
}

/** TCB status strings of Intel PCS. */
export type TcbStatus =
  | 'UpToDate'
  | 'SWHardeningNeeded'
  | 'ConfigurationNeeded'
  | 'ConfigurationAndSWHardeningNeeded'
  | 'OutOfDate'
  | 'OutOfDateConfigurationNeeded'
  | 'Revoked';

/** Every TCB status Intel defines, best first. */
export const TCB_STATUSES: readonly TcbStatus[] = ['UpToDate', 'SWHardeningNeeded', 'ConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded', 'OutOfDate', 'OutOfDateConfigurationNeeded', 'Revoked'];

/** One platform TCB level of the TCB info. */
export interface TdxTcbLevel {
  sgxComponents: number[];
  pceSvn: number;
  tdxComponents: number[];
  tcbDate: string;
  tcbStatus: TcbStatus;
  advisoryIds: string[];
}

/** One TDX module identity (TCB info v3 `tdxModuleIdentities`). */
export interface TdxModuleIdentity {
  id: string;
  mrSigner: Buffer;
  attributes: Buffer;
  attributesMask: Buffer;
  tcbLevels: { isvSvn: number; tcbStatus: TcbStatus; tcbDate: string }[];
}

/** A signed document: its validated content, the raw signed text and the signature. */
export interface Signed<T> {
  value: T;
  signedText: string;
  signature: Buffer;
}

/** TDX TCB info. */
export interface TdxTcbInfo {
  issueDate: Date;
  nextUpdate: Date;
  fmspc: Buffer;
  pceId: Buffer;
  tcbEvaluationDataNumber: number;
  tcbLevels: TdxTcbLevel[];
  /** The TDX module the platform must run (signer and SEAM attributes), when given. */
  tdxModule: { mrSigner: Buffer; attributes: Buffer; attributesMask: Buffer } | undefined;
  moduleIdentities: TdxModuleIdentity[];
}

/** TD quoting enclave identity. */
export interface QeIdentity {
  issueDate: Date;
  nextUpdate: Date;
  miscSelect: number;
  miscSelectMask: number;
  attributes: Buffer;
  attributesMask: Buffer;
  mrSigner: Buffer;
  isvProdId: number;
  tcbLevels: { isvSvn: number; tcbStatus: TcbStatus; tcbDate: string }[];
}

type Json = Record<string, unknown>;

/** Parses a PCS TCB info body (TDX, version 3). */
export function parseTcbInfo(body: string): Signed<TdxTcbInfo> {
  const { member, signedText, signature } = splitSigned(body, 'tcbInfo', 'TCB info');
  const f = fields(member, 'TCB info');
  if (f.str('id') !== 'TDX') f.fail('id', `is "${String(member.id)}", not "TDX"`);
  if (f.int('version') !== 3) f.fail('version', `is ${String(member.version)}, not 3`);
  const tcbLevels = f.array('tcbLevels').map((raw, i) => {
    const l = fields(raw, `TCB info tcbLevels[${i}]`);
    const tcb = fields(l.obj('tcb'), `TCB info tcbLevels[${i}].tcb`);
    const svns = (key: string) => tcb.array(key).map((c, j) => fields(c, `TCB info tcbLevels[${i}].tcb.${key}[${j}]`).int('svn'));
    const sgxComponents = svns('sgxtcbcomponents');
    const tdxComponents = svns('tdxtcbcomponents');
    if (sgxComponents.length !== 16 || tdxComponents.length !== 16) l.fail('tcb', 'needs 16 SGX and 16 TDX components');
    return { sgxComponents, pceSvn: tcb.int('pcesvn'), tdxComponents, tcbDate: l.str('tcbDate'), tcbStatus: l.status(), advisoryIds: l.optStrings('advisoryIDs') };
  });
  const moduleIdentities = (member.tdxModuleIdentities === undefined ? [] : f.array('tdxModuleIdentities')).map((raw, i) => {
    const m = fields(raw, `TCB info tdxModuleIdentities[${i}]`);
    return { id: m.str('id'), mrSigner: m.hex('mrsigner', 48), attributes: m.hex('attributes', 8), attributesMask: m.hex('attributesMask', 8), tcbLevels: isvLevels(m, `TCB info tdxModuleIdentities[${i}]`) };
  });
  const mod = member.tdxModule === undefined ? undefined : fields(f.obj('tdxModule'), 'TCB info tdxModule');
  const tdxModule = mod && { mrSigner: mod.hex('mrsigner', 48), attributes: mod.hex('attributes', 8), attributesMask: mod.hex('attributesMask', 8) };
  return {
    value: { issueDate: f.date('issueDate'), nextUpdate: f.date('nextUpdate'), fmspc: f.hex('fmspc', 6), pceId: f.hex('pceId', 2), tcbEvaluationDataNumber: f.int('tcbEvaluationDataNumber'), tcbLevels, tdxModule, moduleIdentities },
    signedText,
    signature,
  };
}

/** Parses a PCS QE identity body (TD_QE, version 2). */
export function parseQeIdentity(body: string): Signed<QeIdentity> {
  const { member, signedText, signature } = splitSigned(body, 'enclaveIdentity', 'QE identity');
  const f = fields(member, 'QE identity');
  if (f.str('id') !== 'TD_QE') f.fail('id', `is "${String(member.id)}", not "TD_QE"`);
  if (f.int('version') !== 2) f.fail('version', `is ${String(member.version)}, not 2`);
  return {
    value: {
      issueDate: f.date('issueDate'),
      nextUpdate: f.date('nextUpdate'),
      miscSelect: f.hex('miscselect', 4).readUInt32BE(0),
      miscSelectMask: f.hex('miscselectMask', 4).readUInt32BE(0),
      attributes: f.hex('attributes', 16),
      attributesMask: f.hex('attributesMask', 16),
      mrSigner: f.hex('mrsigner', 32),
      isvProdId: f.int('isvprodid'),
      tcbLevels: isvLevels(f, 'QE identity'),
    },
    signedText,
    signature,
  };
}

function isvLevels(f: Fields, what: string): { isvSvn: number; tcbStatus: TcbStatus; tcbDate: string }[] {
  return f.array('tcbLevels').map((raw, i) => {
    const l = fields(raw, `${what} tcbLevels[${i}]`);
    return { isvSvn: fields(l.obj('tcb'), `${what} tcbLevels[${i}].tcb`).int('isvsvn'), tcbStatus: l.status(), tcbDate: l.str('tcbDate') };
  });
}

/**
 * Splits `{"<key>":{…},"signature":"<hex>"}` into the member's raw text (what Intel signed) and
 * the 64-byte signature. PCS writes exactly this shape; anything else is refused.
 */
function splitSigned(body: string, key: string, what: string): { member: Json; signedText: string; signature: Buffer } {
  const malformed = (why: string): never => {
    throw new AttestationError('COLLATERAL_MALFORMED', `${what}: ${why}`, { details: { collateral: what } });
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    malformed('not JSON');
  }
  const m = new RegExp(`^\\s*\\{"${key}":(\\{[\\s\\S]*\\}),"signature":"([0-9a-fA-F]{128})"\\}\\s*$`).exec(body);
  if (!m) malformed(`not of the form {"${key}":{…},"signature":"<128 hex>"}`);
  const member = (parsed as Json)[key];
  if (typeof member !== 'object' || member === null || Array.isArray(member)) malformed(`"${key}" is not an object`);
  return { member: member as Json, signedText: m![1]!, signature: Buffer.from(m![2]!, 'hex') };
}

interface Fields {
  fail(key: string, why: string): never;
  str(key: string): string;
  int(key: string): number;
  hex(key: string, bytes: number): Buffer;
  date(key: string): Date;
  obj(key: string): Json;
  array(key: string): unknown[];
  optStrings(key: string): string[];
  status(): TcbStatus;
}

/** Typed, error-naming accessors over one JSON object of a collateral document. */
function fields(raw: unknown, what: string): Fields {
  const fail = (key: string, why: string): never => {
    throw new AttestationError('COLLATERAL_MALFORMED', `${what}: "${key}" ${why}`, { details: { collateral: what, field: key } });
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('(self)', 'is not an object');
  const o = raw as Json;
  const str = (key: string): string => (typeof o[key] === 'string' ? (o[key] as string) : fail(key, 'is missing or not a string'));
  return {
    fail,
    str,
    int: (key) => (Number.isSafeInteger(o[key]) && (o[key] as number) >= 0 ? (o[key] as number) : fail(key, 'is missing or not a non-negative integer')),
    hex: (key, bytes) => {
      const s = str(key);
      return s.length === bytes * 2 && /^[0-9a-fA-F]*$/.test(s) ? Buffer.from(s, 'hex') : fail(key, `is not ${bytes} bytes of hex`);
    },
    date: (key) => {
      const d = new Date(str(key));
      return Number.isNaN(d.getTime()) ? fail(key, 'is not a date') : d;
    },
    obj: (key) => (typeof o[key] === 'object' && o[key] !== null && !Array.isArray(o[key]) ? (o[key] as Json) : fail(key, 'is missing or not an object')),
    array: (key) => (Array.isArray(o[key]) ? (o[key] as unknown[]) : fail(key, 'is missing or not an array')),
    optStrings: (key) => (o[key] === undefined ? [] : Array.isArray(o[key]) && (o[key] as unknown[]).every((s) => typeof s === 'string') ? (o[key] as string[]) : fail(key, 'is not an array of strings')),
    status: () => {
      const s = str('tcbStatus');
      return (TCB_STATUSES as readonly string[]).includes(s) ? (s as TcbStatus) : fail('tcbStatus', `"${s}" is not a known TCB status`);
    },
  };
}
