import type { VariantId as Variant } from './variant.js';

/**
 * Produces an attestation document binding `userData` (for aTLS: sha256 of the TLS key's SPKI)
 * to the peer's `nonce` (docs/protocol/atls.md).
 */
export interface Issuer {
  readonly variant: Variant;
  issue(userData: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array>;
}

/**
 * Checks a document for `nonce` and returns the user data bound inside it; the caller compares
 * that with what it expects. Rejections throw AttestationError with a precise code.
 */
export interface Validator {
  readonly variant: Variant;
  validate(document: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array>;
}

/** Receives non-fatal findings (warn-only measurement mismatches, skipped checks). */
export interface AttestationLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** Discards everything. */
export const NOP_ATTESTATION_LOGGER: AttestationLogger = { info: () => undefined, warn: () => undefined };
