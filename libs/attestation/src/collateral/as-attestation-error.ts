import { AttestationError } from '../errors.js';

/**
 * Runs a collateral lookup for a validator: a cache failure (COLLATERAL_UNAVAILABLE,
 * COLLATERAL_INVALID) becomes the AttestationError with the same code, message and details, so
 * every variant reports "no collateral" as such instead of a generic refusal (docs/collateral.md).
 */
export async function collateralLookup<T>(lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (err) {
    if (err instanceof AttestationError) throw err;
    const e = err as { code?: unknown; message?: string; details?: Record<string, unknown> };
    if (e.code === 'COLLATERAL_UNAVAILABLE' || e.code === 'COLLATERAL_INVALID') {
      throw new AttestationError(e.code, e.message ?? String(err), { details: { ...e.details }, cause: err });
    }
    throw err;
  }
}
