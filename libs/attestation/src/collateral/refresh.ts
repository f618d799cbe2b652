/**
 * When cached collateral is refreshed in the background (docs/collateral.md "Refresh before
 * expiry"): well before the instant a verifier starts refusing it, so a rollover never reaches a
 * handshake and a vendor outage at that moment has weeks of slack instead of none.
 */

const DAY_MS = 86_400_000;

/** Lead time before "next update" for signed data published on a cycle (Intel PCS). */
export const SIGNED_DATA_REFRESH_LEAD_MS = 7 * DAY_MS;

/** Lead time before a certificate's notAfter (the early-refusal warning window). */
export const CERTIFICATE_REFRESH_LEAD_MS = 30 * DAY_MS;

/**
 * Signed data valid from `issuedMs` until `nextUpdateMs` (TCB info, QE identity, CRLs): refresh
 * at the midpoint of its window or 7 days before it ends, whichever is earlier, never before it
 * was issued. A monthly TCB info is refreshed after about two weeks, a yearly CRL after half a year.
 */
export function signedDataRefreshAt(issuedMs: number, nextUpdateMs: number): number {
  const midpoint = issuedMs + Math.floor((nextUpdateMs - issuedMs) / 2);
  return Math.max(issuedMs, Math.min(midpoint, nextUpdateMs - SIGNED_DATA_REFRESH_LEAD_MS));
}

/**
 * A certificate valid from `notBeforeMs` to `notAfterMs` (VCEK, ASK): refresh 30 days before it
 * expires (never before it became valid). Certificates live for years, so a midpoint rule would
 * re-ask the vendor for an unchanged certificate for years; the last month is enough slack.
 */
export function certificateRefreshAt(notBeforeMs: number, notAfterMs: number): number {
  return Math.max(notBeforeMs, notAfterMs - CERTIFICATE_REFRESH_LEAD_MS);
}
