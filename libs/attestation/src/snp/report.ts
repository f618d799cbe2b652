/**
 * SEV-SNP attestation report parsing (docs/protocol/sev-snp.md §1-§2): versions 2 to 5, exactly
 * 0x4A0 bytes, every reserved (must-be-zero) region of the version checked. Version 3 added the
 * CPUID family/model/stepping, version 5 the launch and current mitigation vectors; the TCB
 * layout follows the CPUID family (Turin and later: FMC at byte 0). The result is a validated,
 * immutable domain object; nothing downstream reads raw offsets again.
 */
import { AttestationError } from '../errors.js';
import type { TcbLayout } from './lines.js';
import { decodeTcb, type TcbVersion } from './tcb.js';

/** Size of a report, and of the part its signature covers. */
export const REPORT_SIZE = 0x4a0;
export const SIGNED_SIZE = 0x2a0;
/** Report versions this parser understands. */
export const SUPPORTED_REPORT_VERSIONS: readonly number[] = [2, 3, 4, 5];
/** Offsets of the version 5 mitigation vectors (reserved, must be zero, before). */
export const LAUNCH_MIT_VECTOR_OFFSET = 0x1f8;
export const CURRENT_MIT_VECTOR_OFFSET = 0x200;
/** CPUID family of Turin (Zen 5); this family and later use the Turin TCB layout. */
export const TURIN_FAMILY = 0x1a;

/** Who signed the report (SIGNING_KEY of the signer info). */
export type SnpSigningKey = 'vcek' | 'vlek' | 'none';

/** Decoded guest policy bits. */
export interface SnpPolicy {
  readonly raw: bigint;
  readonly abiMinor: number;
  readonly abiMajor: number;
  readonly smt: boolean;
  readonly migrateMa: boolean;
  readonly debug: boolean;
  readonly singleSocket: boolean;
  readonly cxlAllowed: boolean;
  readonly memAes256Xts: boolean;
  readonly raplDisabled: boolean;
  readonly ciphertextHiding: boolean;
  readonly pageSwapDisabled: boolean;
}

/** Firmware version triple (current or committed). */
export interface SnpFirmwareVersion {
  readonly major: number;
  readonly minor: number;
  readonly build: number;
}

/** A parsed, structurally valid SEV-SNP attestation report. */
export interface SnpReport {
  readonly raw: Buffer;
  readonly version: number;
  readonly guestSvn: number;
  readonly policy: SnpPolicy;
  readonly familyId: Buffer;
  readonly imageId: Buffer;
  readonly vmpl: number;
  readonly signatureAlgo: number;
  readonly currentTcb: TcbVersion;
  readonly platformInfo: bigint;
  readonly authorKeyEnabled: boolean;
  readonly maskChipKey: boolean;
  readonly signingKey: SnpSigningKey;
  readonly reportData: Buffer;
  readonly measurement: Buffer;
  readonly hostData: Buffer;
  readonly idKeyDigest: Buffer;
  readonly authorKeyDigest: Buffer;
  readonly reportId: Buffer;
  readonly reportIdMa: Buffer;
  readonly reportedTcb: TcbVersion;
  /** CPUID family/model/stepping (version 3+); undefined for version 2 or all-zero bytes. */
  readonly cpuid: { family: number; model: number; stepping: number } | undefined;
  readonly chipId: Buffer;
  readonly committedTcb: TcbVersion;
  readonly currentVersion: SnpFirmwareVersion;
  readonly committedVersion: SnpFirmwareVersion;
  readonly launchTcb: TcbVersion;
  /** How the TCB fields were decoded (from the CPUID family). */
  readonly tcbLayout: TcbLayout;
  /** Version 5+: mitigations in force at launch / now (AMD-defined bits); undefined before. */
  readonly launchMitVector: bigint | undefined;
  readonly currentMitVector: bigint | undefined;
  /** Signature R and S as big-endian 48-byte integers (converted from the report's little-endian). */
  readonly signatureR: Buffer;
  readonly signatureS: Buffer;
  /** Bytes [0, 0x2A0), which the signature covers. */
  readonly signedBytes: Buffer;
}

const invalid = (message: string, details: Record<string, unknown> = {}) => new AttestationError('REPORT_INVALID', `SNP report: ${message}`, { details });

/** Throws REPORT_INVALID when any byte of [start, end) is set. */
function mustBeZero(buf: Buffer, start: number, end: number, field: string): void {
  for (let i = start; i < end; i++) {
    if (buf[i] !== 0) throw invalid(`reserved field ${field} (offset 0x${start.toString(16)}) must be zero, byte 0x${i.toString(16)} is 0x${buf[i]!.toString(16)}`, { field, offset: i });
  }
}

/** Policy bits 26-63 must be zero and bit 17 must be one. */
const POLICY_MBZ = ~((1n << 26n) - 1n) & 0xffff_ffff_ffff_ffffn;
const POLICY_RESERVED_ONE = 1n << 17n;

/** Decodes and checks the guest policy word. */
export function decodePolicy(raw: bigint): SnpPolicy {
  if ((raw & POLICY_MBZ) !== 0n) throw invalid(`policy 0x${raw.toString(16)} sets reserved bits 26-63`, { field: 'policy', policy: `0x${raw.toString(16)}` });
  if ((raw & POLICY_RESERVED_ONE) === 0n) throw invalid(`policy 0x${raw.toString(16)} must set reserved bit 17`, { field: 'policy', policy: `0x${raw.toString(16)}` });
  const bit = (n: number) => ((raw >> BigInt(n)) & 1n) === 1n;
  return {
    raw,
    abiMinor: Number(raw & 0xffn),
    abiMajor: Number((raw >> 8n) & 0xffn),
    smt: bit(16),
    migrateMa: bit(18),
    debug: bit(19),
    singleSocket: bit(20),
    cxlAllowed: bit(21),
    memAes256Xts: bit(22),
    raplDisabled: bit(23),
    ciphertextHiding: bit(24),
    pageSwapDisabled: bit(25),
  };
}

/** 72 little-endian bytes -> 48 big-endian bytes; the high 24 bytes must be zero. */
function signatureComponent(buf: Buffer, offset: number, name: string): Buffer {
  mustBeZero(buf, offset + 48, offset + 72, `signature ${name} high bytes`);
  return Buffer.from(buf.subarray(offset, offset + 48)).reverse();
}

const SIGNING_KEYS: Record<number, SnpSigningKey> = { 0: 'vcek', 1: 'vlek', 7: 'none' };

function signerInfo(buf: Buffer): { authorKeyEnabled: boolean; maskChipKey: boolean; signingKey: SnpSigningKey } {
  const info = buf.readUInt32LE(0x48);
  if (info >>> 5 !== 0) throw invalid(`signer info 0x${info.toString(16)} sets reserved bits 5-31`, { field: 'signerInfo', signerInfo: info });
  const key = (info >>> 2) & 0x7;
  const signingKey = SIGNING_KEYS[key];
  if (!signingKey) throw invalid(`signing key ${key} is reserved (0 = VCEK, 1 = VLEK, 7 = none)`, { field: 'signingKey', signingKey: key });
  return { authorKeyEnabled: (info & 1) === 1, maskChipKey: (info & 2) === 2, signingKey };
}

function cpuidOf(buf: Buffer, version: number): SnpReport['cpuid'] {
  if (version < 3) {
    mustBeZero(buf, 0x188, 0x1a0, 'reserved after REPORTED_TCB');
    return undefined;
  }
  mustBeZero(buf, 0x18b, 0x1a0, 'reserved after CPUID');
  const [family, model, stepping] = [buf[0x188]!, buf[0x189]!, buf[0x18a]!];
  return family === 0 && model === 0 && stepping === 0 ? undefined : { family, model, stepping };
}

/** Version 5+: the two mitigation vectors; before, their bytes are reserved. Then [0x208, 0x2A0) is reserved. */
function mitigationVectors(buf: Buffer, version: number): { launchMitVector: bigint | undefined; currentMitVector: bigint | undefined } {
  if (version < 5) {
    mustBeZero(buf, LAUNCH_MIT_VECTOR_OFFSET, SIGNED_SIZE, 'reserved after LAUNCH_TCB');
    return { launchMitVector: undefined, currentMitVector: undefined };
  }
  mustBeZero(buf, CURRENT_MIT_VECTOR_OFFSET + 8, SIGNED_SIZE, 'reserved after CURRENT_MIT_VECTOR');
  return { launchMitVector: buf.readBigUInt64LE(LAUNCH_MIT_VECTOR_OFFSET), currentMitVector: buf.readBigUInt64LE(CURRENT_MIT_VECTOR_OFFSET) };
}

/** Turin layout from CPUID family 0x1A on (version 3+); Milan/Genoa layout otherwise. */
function layoutOf(cpuid: SnpReport['cpuid']): TcbLayout {
  return cpuid && cpuid.family >= TURIN_FAMILY ? 'turin' : 'legacy';
}

const copy = (buf: Buffer, offset: number, size: number) => Buffer.from(buf.subarray(offset, offset + size));
const firmware = (buf: Buffer, offset: number): SnpFirmwareVersion => ({ build: buf[offset]!, minor: buf[offset + 1]!, major: buf[offset + 2]! });

/**
 * Parses a raw report. Fails with REPORT_INVALID (naming the field and offset) on a wrong size,
 * an unsupported version or signature algorithm, a reserved signing key, or any set reserved bit.
 */
export function parseReport(data: Uint8Array): SnpReport {
  if (data.length !== REPORT_SIZE) throw invalid(`expected ${REPORT_SIZE} bytes, got ${data.length}`, { field: 'size', expected: REPORT_SIZE, actual: data.length });
  const buf = Buffer.from(data);
  const version = buf.readUInt32LE(0);
  if (!SUPPORTED_REPORT_VERSIONS.includes(version)) throw invalid(`version ${version} is not supported (2 to 5)`, { field: 'version', expected: SUPPORTED_REPORT_VERSIONS, actual: version });
  const signatureAlgo = buf.readUInt32LE(0x34);
  if (signatureAlgo !== 1) throw invalid(`signature algorithm ${signatureAlgo} is not ECDSA P-384 with SHA-384 (1)`, { field: 'signatureAlgo', expected: 1, actual: signatureAlgo });
  const vmpl = buf.readUInt32LE(0x30);
  if (vmpl > 3) throw invalid(`VMPL ${vmpl} is out of range 0-3`, { field: 'vmpl', actual: vmpl });
  mustBeZero(buf, 0x4c, 0x50, 'reserved after signer info');
  mustBeZero(buf, 0x1eb, 0x1ec, 'reserved after current version');
  mustBeZero(buf, 0x1ef, 0x1f0, 'reserved after committed version');
  const mitigations = mitigationVectors(buf, version);
  mustBeZero(buf, SIGNED_SIZE + 144, REPORT_SIZE, 'reserved after the signature');
  const cpuid = cpuidOf(buf, version);
  const tcbLayout = layoutOf(cpuid);
  return {
    raw: buf,
    version,
    guestSvn: buf.readUInt32LE(4),
    policy: decodePolicy(buf.readBigUInt64LE(8)),
    familyId: copy(buf, 0x10, 16),
    imageId: copy(buf, 0x20, 16),
    vmpl,
    signatureAlgo,
    currentTcb: decodeTcb(buf, 0x38, tcbLayout),
    platformInfo: buf.readBigUInt64LE(0x40),
    ...signerInfo(buf),
    reportData: copy(buf, 0x50, 64),
    measurement: copy(buf, 0x90, 48),
    hostData: copy(buf, 0xc0, 32),
    idKeyDigest: copy(buf, 0xe0, 48),
    authorKeyDigest: copy(buf, 0x110, 48),
    reportId: copy(buf, 0x140, 32),
    reportIdMa: copy(buf, 0x160, 32),
    reportedTcb: decodeTcb(buf, 0x180, tcbLayout),
    cpuid,
    chipId: copy(buf, 0x1a0, 64),
    committedTcb: decodeTcb(buf, 0x1e0, tcbLayout),
    currentVersion: firmware(buf, 0x1e8),
    committedVersion: firmware(buf, 0x1ec),
    launchTcb: decodeTcb(buf, 0x1f0, tcbLayout),
    tcbLayout,
    ...mitigations,
    signatureR: signatureComponent(buf, SIGNED_SIZE, 'R'),
    signatureS: signatureComponent(buf, SIGNED_SIZE + 72, 'S'),
    signedBytes: copy(buf, 0, SIGNED_SIZE),
  };
}
