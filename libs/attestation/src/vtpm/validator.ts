/**
 * The generic vTPM validator (docs/protocol/vtpm-attestation.md, validating), with the reference's weakness
 * fixed: the SHA-256 quote whose PCR values are compared is itself verified (signature with the
 * trusted AK, tpmNonce binding, exact selection, PCR digest) before any measurement is trusted.
 */
import { decodePublic, QuoteVerificationError, samePublicKey, TPM_ALG, verifyQuote, type TpmtPublic } from '@asterism/tpm';
import { AttestationError, type AttestationErrorCode } from '../errors.js';
import { makeExtraData, makeTpmNonce } from '../extra-data.js';
import type { AttestationLogger, Validator } from '../interfaces.js';
import { enforceMeasurements } from '../measurements/compare.js';
import type { Measurement } from '../measurements/measurement.js';
import type { VariantId as Variant } from '../variant.js';
import { decodeDocument, findSha256QuoteIndex, type VtpmAttestationDocument } from './document.js';
import { verifyEventLogAgainstPcrs } from './event-log.js';

/** Variant-specific parts of a vTPM validator. */
export interface VtpmValidatorOptions {
  readonly variant: Variant;
  readonly measurements: ReadonlyMap<number, Measurement>;
  readonly logger: AttestationLogger;
  /** Returns the AK this variant trusts for `doc` (may check instance info bound to extraData). */
  readonly getTrustedKey: (doc: VtpmAttestationDocument, extraData: Buffer, signal?: AbortSignal) => Promise<TpmtPublic>;
  /** Variant CVM checks (docs/protocol/vtpm-attestation.md, stage 5); none by default. */
  readonly validateCvm?: (doc: VtpmAttestationDocument, signal?: AbortSignal) => Promise<void>;
}

const QUOTE_CODE: Record<string, AttestationErrorCode> = {
  QUOTE_SIGNATURE_INVALID: 'QUOTE_SIGNATURE_INVALID',
  QUOTE_NONCE_MISMATCH: 'NONCE_MISMATCH',
  QUOTE_PCR_DIGEST_MISMATCH: 'PCR_DIGEST_MISMATCH',
  QUOTE_PCR_SELECTION_MISMATCH: 'QUOTE_INVALID',
  QUOTE_MALFORMED: 'QUOTE_INVALID',
};

/** Validates vTPM attestation documents of one variant. */
export class VtpmValidator implements Validator {
  readonly variant: Variant;

  constructor(private readonly options: VtpmValidatorOptions) {
    this.variant = options.variant;
  }

  async validate(document: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    const doc = decodeDocument(document);
    const extraData = makeExtraData(doc.userData, nonce);
    const trusted = await this.trustedKey(doc, extraData, signal);
    const tpmNonce = makeTpmNonce(doc.instanceInfo, extraData);
    const pcrs = this.verifySha256Quote(doc, trusted, tpmNonce);
    this.replayEventLog(doc, pcrs);
    signal?.throwIfAborted();
    await this.options.validateCvm?.(doc, signal);
    enforceMeasurements(this.options.measurements, pcrs, this.options.logger);
    return doc.userData;
  }

  /** Variant trust decision for the AK (step 3). */
  private async trustedKey(doc: VtpmAttestationDocument, extraData: Buffer, signal?: AbortSignal): Promise<TpmtPublic> {
    try {
      return await this.options.getTrustedKey(doc, extraData, signal);
    } catch (err) {
      if (err instanceof AttestationError) throw err;
      throw new AttestationError('AK_UNTRUSTED', `validating attestation public key: ${(err as Error).message}`, { cause: err });
    }
  }

  /** The document's AK is the trusted one, and its SHA-256 quote verifies (step 5, made explicit). */
  private verifySha256Quote(doc: VtpmAttestationDocument, trusted: TpmtPublic, tpmNonce: Buffer): Map<number, Buffer> {
    const att = doc.attestation;
    let akPub: TpmtPublic;
    try {
      akPub = decodePublic(att?.akPub ?? Buffer.alloc(0));
    } catch (err) {
      throw new AttestationError('QUOTE_INVALID', `decoding ak_pub: ${(err as Error).message}`, { cause: err });
    }
    if (!samePublicKey(akPub, trusted)) throw new AttestationError('AK_MISMATCH', 'the document\'s attestation key (ak_pub) is not the trusted attestation key');
    const index = findSha256QuoteIndex(att);
    const q = att!.quotes[index]!;
    try {
      verifyQuote({ akPublic: akPub, attest: q.quote, signature: q.rawSig, nonce: tpmNonce, pcrs: q.pcrs!.pcrs, pcrHashAlg: TPM_ALG.SHA256 });
    } catch (err) {
      if (!(err instanceof QuoteVerificationError)) throw err;
      const code = QUOTE_CODE[err.code] ?? 'QUOTE_INVALID';
      const msg =
        code === 'NONCE_MISMATCH'
          ? 'SHA-256 quote is not bound to this nonce and user data (extraData != SHA256(instanceInfo || SHA256(userData || nonce)))'
          : `SHA-256 quote: ${err.message}`;
      throw new AttestationError(code, msg, { cause: err, details: { check: err.code, quoteIndex: index, ...err.details } });
    }
    return q.pcrs!.pcrs;
  }

  /** A non-empty event log must replay to the verified SHA-256 PCR values. */
  private replayEventLog(doc: VtpmAttestationDocument, pcrs: Map<number, Buffer>): void {
    const log = doc.attestation?.eventLog ?? Buffer.alloc(0);
    if (log.length > 0) verifyEventLogAgainstPcrs(log, pcrs, TPM_ALG.SHA256);
  }
}
