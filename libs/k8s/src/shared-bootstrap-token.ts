/**
 * Bootstrap tokens shared by the joins of a time window (docs/adr/0020-shared-bootstrap-tokens.md).
 *
 * Every live bootstrap token costs the controller-manager work on every token change: the
 * bootstrap signer re-signs `kube-public/cluster-info` with each token (one JWS each). One token per
 * join made the cost of a join grow with the number of recent joins. Here a token is created at most
 * once per window and handed to every join of that window; it is created with `ttl + window`
 * validity so that every caller still gets at least the `ttl` it asked for. Live tokens are then
 * bounded by (ttl + window) / window + 1, whatever the join rate.
 */
import type { BootstrapToken, BootstrapTokenSecretOptions } from './bootstrap-token.js';

/** What the pool needs to create a token (BootstrapTokenIssuer implements it). */
export interface BootstrapTokenCreator {
  create(options: BootstrapTokenSecretOptions): Promise<BootstrapToken>;
}

/** Options of SharedBootstrapTokens. */
export interface SharedBootstrapTokensOptions {
  /** How long one token is handed out to new joins (also its extra validity). */
  windowMs: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

interface Current {
  token: BootstrapToken;
  key: string;
  createdAt: number;
  expiresAt: number;
}

/** The default window: one new token per minute at most. */
export const SHARED_TOKEN_WINDOW_MS = 60_000;

/** Hands out one bootstrap token per window (see module comment); same `create` shape as the issuer. */
export class SharedBootstrapTokens implements BootstrapTokenCreator {
  readonly #issuer: BootstrapTokenCreator;
  readonly #windowMs: number;
  readonly #now: () => number;
  #current: Current | undefined;
  #pending: Promise<Current> | undefined;

  constructor(issuer: BootstrapTokenCreator, options: SharedBootstrapTokensOptions = { windowMs: SHARED_TOKEN_WINDOW_MS }) {
    if (!(options.windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${options.windowMs}`);
    this.#issuer = issuer;
    this.#windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
  }

  /** A token valid for at least `options.ttlMs` from now: the window's token, or a new one. */
  async create(options: BootstrapTokenSecretOptions): Promise<BootstrapToken> {
    const key = JSON.stringify([options.groups ?? null, options.description ?? null]);
    for (;;) {
      const now = this.#now();
      const current = this.#current;
      if (current && current.key === key && now - current.createdAt < this.#windowMs && current.expiresAt - now >= options.ttlMs) return current.token;
      if (!this.#pending) {
        this.#pending = this.#createNew(options, key, now).finally(() => (this.#pending = undefined));
        return (await this.#pending).token;
      }
      // Another join is creating the window's token: wait for it, then check it suits this caller.
      await this.#pending.catch(() => undefined);
    }
  }

  async #createNew(options: BootstrapTokenSecretOptions, key: string, now: number): Promise<Current> {
    const ttlMs = options.ttlMs + this.#windowMs;
    const token = await this.#issuer.create({ ...options, ttlMs, now: new Date(now) });
    // The Secret's expiration is written with whole seconds, rounded down.
    const current = { token, key, createdAt: now, expiresAt: Math.floor((now + ttlMs) / 1000) * 1000 };
    this.#current = current;
    return current;
  }
}
