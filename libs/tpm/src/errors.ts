import { AsterismError } from '@asterism/errors';
import { describeResponseCode, type ResponseCodeInfo } from './response-codes.js';

/**
 * Stable reason codes of libs/tpm. Parsing failures (`TPM_PARSE`), TPM-reported failures
 * (`TPM_RC`), transport failures (`TPM_TRANSPORT`) and quote verification failures
 * (`QUOTE_*`) are distinct so callers can map them precisely.
 */
export type TpmErrorCode =
  | 'TPM_PARSE'
  | 'TPM_RC'
  | 'TPM_TRANSPORT'
  | 'TPM_UNSUPPORTED'
  | 'QUOTE_MALFORMED'
  | 'QUOTE_SIGNATURE_INVALID'
  | 'QUOTE_NONCE_MISMATCH'
  | 'QUOTE_PCR_SELECTION_MISMATCH'
  | 'QUOTE_PCR_DIGEST_MISMATCH';

/** Base of every libs/tpm error. */
export class TpmError extends AsterismError<TpmErrorCode> {}

/** Truncated, oversized or otherwise malformed TPM bytes (a response, TPMT_PUBLIC, TPMS_ATTEST, ...). */
export class TpmParseError extends TpmError {
  constructor(what: string, reason: string, details: Record<string, unknown> = {}) {
    super('TPM_PARSE', `parsing ${what}: ${reason}`, { details: { structure: what, ...details } });
  }
}

/** The TPM answered with a non-zero response code. */
export class TpmResponseError extends TpmError {
  /** The raw 32-bit response code. */
  readonly rc: number;
  /** The decoded response code (name, parameter/handle/session number). */
  readonly info: ResponseCodeInfo;

  constructor(rc: number, command: string) {
    const info = describeResponseCode(rc);
    super('TPM_RC', `TPM2_${command} failed: ${info.text} (rc=0x${rc.toString(16).padStart(3, '0')})`, {
      details: { command, rc, name: info.name },
    });
    this.rc = rc;
    this.info = info;
  }
}

/** Sending to or receiving from the TPM failed (socket closed, device error, timeout). */
export class TpmTransportError extends TpmError {
  constructor(message: string, cause?: unknown) {
    super('TPM_TRANSPORT', message, cause === undefined ? {} : { cause });
  }
}

/** A quote failed verification: signature (crypto) or nonce/PCR binding (policy). */
export class QuoteVerificationError extends TpmError {}
