import { AttestationError, type Validator, type Variant } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import type { JoinMetrics } from '../metrics.js';

/** Register indices above this are not counted per index (keeps the label set bounded). */
const MAX_REGISTER_INDEX = 63;

/**
 * The register indices of a MEASUREMENT_MISMATCH error (its `details.mismatches`, written by
 * libs/attestation's measurementMismatchError), deduplicated and bounded to integers 0-63; empty for
 * any other error.
 */
export function mismatchedRegisters(err: unknown): number[] {
  if (!(err instanceof AttestationError) || err.code !== 'MEASUREMENT_MISMATCH') return [];
  const mismatches = err.details['mismatches'];
  if (!Array.isArray(mismatches)) return [];
  const indices = mismatches.map((m) => (m as { index?: unknown } | null)?.index).filter((i): i is number => Number.isInteger(i) && (i as number) >= 0 && (i as number) <= MAX_REGISTER_INDEX);
  return [...new Set(indices)].sort((a, b) => a - b);
}

/**
 * Wraps the validator of joining nodes so that every refusal is visible to operators: one warn log
 * line with the reason code and the exact finding (e.g. which PCR, expected vs actual), the
 * `joinservice_tickets_refused_total{kind="attestation",reason=<code>}` counter and, for a
 * measurement mismatch, `joinservice_measurement_mismatches_total{pcr=<index>}` once per register.
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
      const variant = this.inner.variant.name;
      this.metrics.refused.inc({ kind: 'attestation', reason, variant });
      for (const index of mismatchedRegisters(err)) this.metrics.measurementMismatches.inc({ variant, pcr: String(index) });
      this.logger.warn('attestation refused', {
        reason,
        variant,
        error: err instanceof Error ? err.message : String(err),
        ...(err instanceof AttestationError && err.details ? { details: err.details } : {}),
      });
      throw err;
    }
  }
}
