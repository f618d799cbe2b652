/**
 * The MRSERVICETD pin (docs/protocol/tdx-dcap.md "TD 1.5 bodies"): with `mrServiceTd` in the
 * qemu-tdx attestation config, the quote must be a TD 1.5 quote carrying exactly that measurement
 * of its bound service TDs.
 */
import { timingSafeEqual } from 'node:crypto';
import { AttestationError } from '../errors.js';
import type { TdReportBody } from './quote.js';

/** MRSERVICETD_MISMATCH unless `expected` is unset or equals the body's MRSERVICETD (a TD 1.0 body has none). */
export function checkMrServiceTd(body: Pick<TdReportBody, 'mrServiceTd'>, expected: Buffer | undefined): void {
  if (!expected) return;
  const actual = body.mrServiceTd;
  if (actual && actual.length === expected.length && timingSafeEqual(actual, expected)) return;
  throw new AttestationError('MRSERVICETD_MISMATCH', actual ? `TDX quote MRSERVICETD ${actual.toString('hex')} is not the configured ${expected.toString('hex')}` : 'TDX quote has a TD 1.0 body without MRSERVICETD, but the config pins one', {
    details: { field: 'mrServiceTd', expected: expected.toString('hex'), actual: actual ? actual.toString('hex') : null },
  });
}
