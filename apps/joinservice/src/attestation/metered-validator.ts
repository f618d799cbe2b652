import { AttestationError, type Validator, type Variant } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import type { JoinMetrics } from '../metrics.js';

/**
 * Wraps the validator of joining nodes so that every refusal is visible to operators: one warn log
 * line with the reason code and the exact finding (e.g. which PCR, expected vs actual) and the
 * `joinservice_tickets_refused_total{kind="attestation",reason=<code>}` counter.
 */
export class MeteredValidator implements Validator {
  constructor(
    private readonly inner: Validator,
    private readonly metrics: JoinMetrics,
    private readonly logger: Logger,
  ) {}

  get variant(): Variant {
    return this.inner.variant;
  }

  async validate(document: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    try {
      return await this.inner.validate(document, nonce, signal);
    } catch (err) {
      const reason = err instanceof AttestationError ? err.code : 'VALIDATION_FAILED';
      this.metrics.refused.inc({ kind: 'attestation', reason, variant: this.inner.variant.name });
      this.logger.warn('attestation refused', {
        reason,
        variant: this.inner.variant.name,
        error: err instanceof Error ? err.message : String(err),
        ...(err instanceof AttestationError && err.details ? { details: err.details } : {}),
      });
      throw err;
    }
  }
}
