import { decodeDocument, findSha256QuoteIndex, type Validator, type Variant } from '@asterism/attestation';

/**
 * Wraps the real validator and keeps what `asterism verify` shows: the SHA-256 PCR values of the
 * peer's document (decoded before validation, so a refused node still gets its table) and the
 * validation outcome.
 */
export class RecordingValidator implements Validator {
  pcrs: Map<number, Buffer> | undefined;
  /** The peer's raw document (variant reports such as TDX decode it themselves). */
  document: Uint8Array | undefined;
  outcome: { ok: true } | { ok: false; error: Error } | undefined;

  constructor(private readonly inner: Validator) {}

  get variant(): Variant {
    return this.inner.variant;
  }

  async validate(document: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    this.document = document;
    try {
      const doc = decodeDocument(document);
      const quote = doc.attestation?.quotes[findSha256QuoteIndex(doc.attestation)];
      if (quote?.pcrs) this.pcrs = quote.pcrs.pcrs;
    } catch {
      // Not a vTPM document (e.g. dummy): no table, the validator decides.
    }
    try {
      const userData = await this.inner.validate(document, nonce, signal);
      this.outcome = { ok: true };
      return userData;
    } catch (err) {
      this.outcome = { ok: false, error: err as Error };
      throw err;
    }
  }
}
