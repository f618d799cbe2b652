/**
 * TPM 2.0 response codes (TPM 2.0 Library Part 2, TPM_RC) decoded into names, so an operator sees
 * `TPM_RC_AUTH_FAIL (session 1)` instead of `0x98e`.
 */

const VER1: Record<number, string> = {
  0x000: 'INITIALIZE', 0x001: 'FAILURE', 0x003: 'SEQUENCE', 0x00b: 'PRIVATE', 0x019: 'HMAC', 0x020: 'DISABLED',
  0x021: 'EXCLUSIVE', 0x024: 'AUTH_TYPE', 0x025: 'AUTH_MISSING', 0x026: 'POLICY', 0x027: 'PCR', 0x028: 'PCR_CHANGED',
  0x02d: 'UPGRADE', 0x02e: 'TOO_MANY_CONTEXTS', 0x02f: 'AUTH_UNAVAILABLE', 0x030: 'REBOOT', 0x031: 'UNBALANCED',
  0x042: 'COMMAND_SIZE', 0x043: 'COMMAND_CODE', 0x044: 'AUTHSIZE', 0x045: 'AUTH_CONTEXT', 0x046: 'NV_RANGE',
  0x047: 'NV_SIZE', 0x048: 'NV_LOCKED', 0x049: 'NV_AUTHORIZATION', 0x04a: 'NV_UNINITIALIZED', 0x04b: 'NV_SPACE',
  0x04c: 'NV_DEFINED', 0x050: 'BAD_CONTEXT', 0x051: 'CPHASH', 0x052: 'PARENT', 0x053: 'NEEDS_TEST', 0x054: 'NO_RESULT',
  0x055: 'SENSITIVE',
};

const FMT1: Record<number, string> = {
  0x001: 'ASYMMETRIC', 0x002: 'ATTRIBUTES', 0x003: 'HASH', 0x004: 'VALUE', 0x005: 'HIERARCHY', 0x007: 'KEY_SIZE',
  0x008: 'MGF', 0x009: 'MODE', 0x00a: 'TYPE', 0x00b: 'HANDLE', 0x00c: 'KDF', 0x00d: 'RANGE', 0x00e: 'AUTH_FAIL',
  0x00f: 'NONCE', 0x010: 'PP', 0x012: 'SCHEME', 0x015: 'SIZE', 0x016: 'SYMMETRIC', 0x017: 'TAG', 0x018: 'SELECTOR',
  0x01a: 'INSUFFICIENT', 0x01b: 'SIGNATURE', 0x01c: 'KEY', 0x01d: 'POLICY_FAIL', 0x01f: 'INTEGRITY', 0x020: 'TICKET',
  0x021: 'RESERVED_BITS', 0x022: 'BAD_AUTH', 0x023: 'EXPIRED', 0x024: 'POLICY_CC', 0x025: 'BINDING', 0x026: 'CURVE',
  0x027: 'ECC_POINT',
};

const WARN: Record<number, string> = {
  0x001: 'CONTEXT_GAP', 0x002: 'OBJECT_MEMORY', 0x003: 'SESSION_MEMORY', 0x004: 'MEMORY', 0x005: 'SESSION_HANDLES',
  0x006: 'OBJECT_HANDLES', 0x007: 'LOCALITY', 0x008: 'YIELDED', 0x009: 'CANCELED', 0x00a: 'TESTING', 0x010: 'REFERENCE_H0',
  0x011: 'REFERENCE_H1', 0x012: 'REFERENCE_H2', 0x013: 'REFERENCE_H3', 0x014: 'REFERENCE_H4', 0x015: 'REFERENCE_H5',
  0x016: 'REFERENCE_H6', 0x018: 'REFERENCE_S0', 0x019: 'REFERENCE_S1', 0x01a: 'REFERENCE_S2', 0x01b: 'REFERENCE_S3',
  0x01c: 'REFERENCE_S4', 0x01d: 'REFERENCE_S5', 0x01e: 'REFERENCE_S6', 0x020: 'NV_RATE', 0x021: 'LOCKOUT', 0x022: 'RETRY',
  0x023: 'NV_UNAVAILABLE',
};

/** A decoded response code. */
export interface ResponseCodeInfo {
  /** e.g. `TPM_RC_AUTH_FAIL`, `TPM_RC_RETRY`, `TPM_RC_VENDOR(0x...)`. */
  readonly name: string;
  /** The base code with parameter/handle/session bits cleared (e.g. 0x08e for TPM_RC_AUTH_FAIL). */
  readonly base: number;
  readonly kind: 'success' | 'format0' | 'format1' | 'warning' | 'vendor' | 'tpm12' | 'layer';
  /** Which parameter/handle/session the error refers to (format-1 codes only). */
  readonly parameter?: number;
  readonly handle?: number;
  readonly session?: number;
  /** Human-readable text, e.g. `TPM_RC_AUTH_FAIL (session 1)`. */
  readonly text: string;
}

/** Well-known codes callers test for. */
export const TPM_RC = {
  SUCCESS: 0x000,
  INITIALIZE: 0x100,
  FAILURE: 0x101,
  HANDLE: 0x08b,
  AUTH_FAIL: 0x08e,
  VALUE: 0x084,
  NV_UNINITIALIZED: 0x14a,
  NV_RANGE: 0x146,
  RETRY: 0x922,
  YIELDED: 0x908,
  TESTING: 0x90a,
  OBJECT_MEMORY: 0x902,
} as const;

/** Decodes any 32-bit response code (never throws). */
export function describeResponseCode(rc: number): ResponseCodeInfo {
  rc = rc >>> 0;
  if (rc === 0) return { name: 'TPM_RC_SUCCESS', base: 0, kind: 'success', text: 'TPM_RC_SUCCESS' };
  if (rc > 0xfff) {
    const name = `TSS_LAYER_0x${(rc >>> 16).toString(16)}(0x${(rc & 0xffff).toString(16)})`;
    return { name, base: rc, kind: 'layer', text: name };
  }
  if (rc & 0x080) {
    // Format 1: bits 0-5 error number, bit 6 P, bits 8-11 N.
    const num = rc & 0x3f;
    const n = (rc >> 8) & 0xf;
    const base = 0x080 | num;
    const name = `TPM_RC_${FMT1[num] ?? `FMT1_0x${num.toString(16)}`}`;
    if (rc & 0x040) return { name, base, kind: 'format1', parameter: n, text: `${name} (parameter ${n})` };
    if (n & 0x8) return { name, base, kind: 'format1', session: n & 0x7, text: `${name} (session ${n & 0x7})` };
    return { name, base, kind: 'format1', ...(n ? { handle: n } : {}), text: n ? `${name} (handle ${n})` : name };
  }
  if (!(rc & 0x100)) {
    const name = `TPM12_RC_0x${rc.toString(16)}`;
    return { name, base: rc, kind: 'tpm12', text: name };
  }
  if (rc & 0x400) {
    const name = `TPM_RC_VENDOR(0x${rc.toString(16)})`;
    return { name, base: rc, kind: 'vendor', text: name };
  }
  const num = rc & 0x7f;
  if (rc & 0x800) {
    const name = `TPM_RC_${WARN[num] ?? `WARN_0x${num.toString(16)}`}`;
    return { name, base: rc, kind: 'warning', text: name };
  }
  const name = `TPM_RC_${VER1[num] ?? `VER1_0x${num.toString(16)}`}`;
  return { name, base: rc, kind: 'format0', text: name };
}
