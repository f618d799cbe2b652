/**
 * Field-level decoding and encoding for the attestation config. Every rejection is a
 * CONFIG_INVALID AttestationError naming the variant, the field path and the reason.
 */
import { AttestationError } from '../errors.js';
import { goField } from '../go-json.js';
import { goJsonString } from '../measurements/go-json-string.js';
import { decodeHex, jsonType } from '../measurements/measurement.js';
import { certificateFromPem, certificateToPem } from './certificate.js';
import type { AttestationVersion } from './types.js';

/** Decodes the fields of one config document; carries the variant for error messages. */
export class FieldReader {
  constructor(readonly variant: string) {}

  /** CONFIG_INVALID for `field` with a human reason. */
  fail(field: string, reason: string, cause?: unknown): AttestationError {
    return new AttestationError('CONFIG_INVALID', `invalid attestation config for ${this.variant}: field ${field}: ${reason}`, {
      details: { variant: this.variant, field, reason },
      cause,
    });
  }

  /** The value of a JSON object member as Go's decoder binds it (go-json.ts: case-folded, last match wins). */
  get(obj: Record<string, unknown>, name: string): unknown {
    return goField(obj, name);
  }

  /** Like `get`, but absent and `null` are errors. */
  required(obj: Record<string, unknown>, name: string, path: string): unknown {
    const v = this.get(obj, name);
    if (v === undefined || v === null) throw this.fail(path, v === null ? 'must not be null' : 'missing');
    return v;
  }

  /** A JSON object. */
  object(value: unknown, path: string): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw this.fail(path, `expected an object, got ${jsonType(value)}`);
    return value as Record<string, unknown>;
  }

  /** An optional string (absent/null = empty). */
  string(value: unknown, path: string): string {
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') throw this.fail(path, `expected a string, got ${jsonType(value)}`);
    return value;
  }

  /** A whole number in [0, max] (Go uint8/uint16). */
  uint(value: unknown, max: number, path: string): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
      throw this.fail(path, `expected an integer between 0 and ${max}, got ${typeof value === 'number' ? value : jsonType(value)}`);
    }
    return value;
  }

  /** Hex bytes (Go `encoding.HexBytes`): any case, `""` = empty; `length` is checked when non-empty. */
  hex(value: unknown, path: string, length?: number): Buffer {
    const s = this.string(value, path);
    const b = decodeHex(s);
    if (typeof b === 'string') throw this.fail(path, `invalid hex: ${b}`);
    if (length !== undefined && b.length !== 0 && b.length !== length) throw this.fail(path, `expected ${length} bytes, got ${b.length}`);
    return b;
  }

  /** A number in [0, max] or `"latest"` (any case). */
  uintVersion(value: unknown, max: number, path: string): AttestationVersion<number> {
    if (typeof value === 'string') {
      if (value.toLowerCase() === 'latest') return { value: 0, wantLatest: true };
      throw this.fail(path, `invalid version ${JSON.stringify(value)}: expected a number or "latest"`);
    }
    return { value: this.uint(value, max, path), wantLatest: false };
  }

  /** Hex bytes or `"latest"` (any case). */
  hexVersion(value: unknown, path: string, length: number): AttestationVersion<Buffer> {
    if (typeof value === 'string' && value.toLowerCase() === 'latest') return { value: Buffer.alloc(0), wantLatest: true };
    if (typeof value !== 'string') throw this.fail(path, `expected a hex string or "latest", got ${jsonType(value)}`);
    return { value: this.hex(value, path, length), wantLatest: false };
  }

  /** A PEM certificate; absent, `null` and `""` mean unset. */
  certificate(value: unknown, path: string): Buffer | null {
    const pem = this.string(value, path);
    if (pem === '') return null;
    const der = certificateFromPem(pem);
    if (typeof der === 'string') throw this.fail(path, `invalid PEM certificate: ${der}`);
    return der;
  }
}

/** Go JSON of a version field: `"latest"` while unresolved, else the number. */
export function encodeUintVersion(v: AttestationVersion<number>): string {
  return v.wantLatest ? '"latest"' : String(v.value);
}

/** Go JSON of a hex version field: `"latest"` or lower-case hex. */
export function encodeHexVersion(v: AttestationVersion<Buffer>): string {
  return v.wantLatest ? '"latest"' : `"${v.value.toString('hex')}"`;
}

/** Go JSON of a certificate field: the PEM block, or `""` when unset. */
export function encodeCertificate(der: Uint8Array | null): string {
  return der === null || der.length === 0 ? '""' : goJsonString(certificateToPem(der));
}
