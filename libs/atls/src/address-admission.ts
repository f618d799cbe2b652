import { PeerRateLimiter } from '@asterism/service-runtime';
import type { BudgetRefusalReason } from './attestation-budget.js';

/** Why an aTLS server refused a connection before (or instead of) attesting it. */
export type AtlsRefusalReason =
  | 'CONNECTION_LIMIT'
  | 'RESERVED_CAPACITY'
  | 'ADDRESS_CONNECTION_LIMIT'
  | 'ADDRESS_HANDSHAKE_RATE'
  | 'ADDRESS_PENDING_LIMIT'
  | 'PENDING_LIMIT'
  | 'SNI_INVALID'
  | 'DUPLICATE_PEER'
  | 'UNVERIFIED_TIMEOUT'
  | BudgetRefusalReason;

/** Limits applied per connection attempt, before any certificate is built or evidence validated. */
export interface AdmissionLimits {
  /** Connections tracked at once (handshaking or open). */
  maxConnections: number;
  /** Of those, slots only an address holding no connection yet may take. */
  reservedConnections: number;
  /** Connections one address may hold at once. */
  maxConnectionsPerAddress: number;
  /** Concurrent certificate issuances (all addresses / one address). */
  maxPendingHandshakes: number;
  maxPendingHandshakesPerAddress: number;
  /** New handshakes per second one address may start (token bucket), and the burst. */
  handshakesPerSecondPerAddress: number;
  handshakeBurstPerAddress: number;
}

/** Defaults: one address can never hold more than a few percent of the server. */
export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = {
  maxConnections: 1024,
  reservedConnections: 64,
  maxConnectionsPerAddress: 32,
  maxPendingHandshakes: 64,
  maxPendingHandshakesPerAddress: 4,
  handshakesPerSecondPerAddress: 20,
  handshakeBurstPerAddress: 40,
};

interface AddressState {
  open: number;
  pending: number;
}

/**
 * Admission control of an aTLS server, keyed by the peer's IP address: per-address connection,
 * pending-handshake and handshake-rate limits, a global connection cap with a reserve for
 * addresses that hold nothing yet, and refusal counters by reason (docs/adr/0007). It only
 * counts; the server credentials decide when a connection starts, finishes its issuance and closes.
 */
export class AddressAdmission {
  readonly #limits: AdmissionLimits;
  readonly #addresses = new Map<string, AddressState>();
  readonly #rate: PeerRateLimiter;
  readonly #refusals = new Map<AtlsRefusalReason, number>();
  #admitted = 0;
  #open = 0;
  #pending = 0;

  constructor(limits: Partial<AdmissionLimits> = {}) {
    this.#limits = { ...DEFAULT_ADMISSION_LIMITS, ...limits };
    this.#rate = new PeerRateLimiter(this.#limits.handshakesPerSecondPerAddress, this.#limits.handshakeBurstPerAddress);
  }

  /** Connections admitted and not yet closed. */
  get open(): number {
    return this.#open;
  }

  /** Connections admitted so far (each one a TLS handshake the server went on with). */
  get admitted(): number {
    return this.#admitted;
  }

  /** Refusals so far, by reason. */
  get refusals(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.#refusals);
  }

  /** Counts a refusal decided elsewhere (bad SNI, duplicate peer, unverified timeout). */
  count(reason: AtlsRefusalReason): void {
    this.#refusals.set(reason, (this.#refusals.get(reason) ?? 0) + 1);
  }

  /** Admits a new connection from `address` (counted open and pending) or names why not. */
  admit(address: string): AtlsRefusalReason | undefined {
    const l = this.#limits;
    const a = this.#addresses.get(address) ?? { open: 0, pending: 0 };
    const reason =
      this.#open >= l.maxConnections
        ? 'CONNECTION_LIMIT'
        : a.open >= l.maxConnectionsPerAddress
          ? 'ADDRESS_CONNECTION_LIMIT'
          : a.open > 0 && this.#open >= l.maxConnections - l.reservedConnections
            ? 'RESERVED_CAPACITY'
            : a.pending >= l.maxPendingHandshakesPerAddress
              ? 'ADDRESS_PENDING_LIMIT'
              : this.#pending >= l.maxPendingHandshakes
                ? 'PENDING_LIMIT'
                : !this.#rate.take(address)
                  ? 'ADDRESS_HANDSHAKE_RATE'
                  : undefined;
    if (reason) {
      this.count(reason);
      return reason;
    }
    a.open++;
    a.pending++;
    this.#admitted++;
    this.#open++;
    this.#pending++;
    this.#addresses.set(address, a);
    return undefined;
  }

  /** The connection's certificate is built (or failed): it no longer counts as pending. */
  issued(address: string): void {
    const a = this.#addresses.get(address);
    if (!a || a.pending === 0) return;
    a.pending--;
    this.#pending--;
    if (a.open === 0 && a.pending === 0) this.#addresses.delete(address);
  }

  /** The connection closed. */
  closed(address: string): void {
    const a = this.#addresses.get(address);
    if (!a || a.open === 0) return;
    a.open--;
    this.#open--;
    if (a.open === 0 && a.pending === 0) this.#addresses.delete(address);
  }
}

/** The IP of a socket's peer, IPv4-mapped IPv6 addresses folded to IPv4. */
export function peerAddress(remoteAddress: string | undefined): string {
  const a = remoteAddress ?? 'unknown';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}
