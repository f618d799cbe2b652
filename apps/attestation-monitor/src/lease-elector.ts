/**
 * Leader election on a coordination.k8s.io/v1 Lease (docs/adr/0037-continuous-attestation.md), as
 * client-go does it: the holder renews every `retryMs`; another replica takes over when the
 * Lease's record has not changed for `leaseMs` by its OWN clock (so clock skew between nodes does
 * not matter). Writes carry the read resourceVersion, so two candidates never both win.
 */
import * as k8s from '@kubernetes/client-node';
import { fromApiError } from '@asterism/k8s';

/** Lease timing. */
export interface LeaseTiming {
  leaseMs: number;
  retryMs: number;
}

/** client-go's defaults scaled down a little: 15 s lease, renew every 5 s. */
export const DEFAULT_LEASE_TIMING: LeaseTiming = { leaseMs: 15_000, retryMs: 5_000 };

/** One candidate for one Lease. */
export class LeaseElector {
  #observed: { version: string; at: number } | undefined;
  #leader = false;

  constructor(
    private readonly api: k8s.CoordinationV1Api,
    private readonly lease: { namespace: string; name: string },
    private readonly identity: string,
    private readonly timing: LeaseTiming = DEFAULT_LEASE_TIMING,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Whether this candidate held the Lease at its last attempt. */
  get leader(): boolean {
    return this.#leader;
  }

  /** One attempt to acquire or renew; returns whether we hold the Lease now. API errors make us a follower. */
  async tryAcquireOrRenew(): Promise<boolean> {
    try {
      this.#leader = await this.#attempt();
    } catch {
      this.#leader = false;
    }
    return this.#leader;
  }

  async #attempt(): Promise<boolean> {
    const now = new k8s.V1MicroTime();
    const current = await this.#read();
    const spec: k8s.V1LeaseSpec = { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.timing.leaseMs / 1000), renewTime: now };
    if (!current) {
      await this.api.createNamespacedLease({ namespace: this.lease.namespace, body: { metadata: { name: this.lease.name }, spec: { ...spec, acquireTime: now, leaseTransitions: 0 } } });
      return true;
    }
    const version = current.metadata?.resourceVersion ?? '';
    if (this.#observed?.version !== version) this.#observed = { version, at: this.clock() };
    const holder = current.spec?.holderIdentity;
    const mine = holder === this.identity;
    const expired = !holder || this.clock() - this.#observed.at >= this.timing.leaseMs;
    if (!mine && !expired) return false;
    const transitions = (current.spec?.leaseTransitions ?? 0) + (mine ? 0 : 1);
    const body = { ...current, spec: { ...current.spec, ...spec, acquireTime: mine ? current.spec?.acquireTime ?? now : now, leaseTransitions: transitions } };
    try {
      const written = await this.api.replaceNamespacedLease({ ...this.lease, body });
      this.#observed = { version: written.metadata?.resourceVersion ?? '', at: this.clock() };
      return true;
    } catch (err) {
      const e = fromApiError(err, `writing Lease ${this.lease.namespace}/${this.lease.name}`);
      if (e.code === 'K8S_CONFLICT') return false;
      throw e;
    }
  }

  async #read(): Promise<k8s.V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease(this.lease);
    } catch (err) {
      const e = fromApiError(err, `reading Lease ${this.lease.namespace}/${this.lease.name}`);
      if (e.code === 'K8S_NOT_FOUND') return undefined;
      throw e;
    }
  }

  /** Gives the Lease up (clean shutdown): the next candidate need not wait for it to expire. */
  async release(): Promise<void> {
    if (!this.#leader) return;
    this.#leader = false;
    try {
      const current = await this.#read();
      if (current?.spec?.holderIdentity !== this.identity) return;
      await this.api.replaceNamespacedLease({ ...this.lease, body: { ...current, spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1 } } });
    } catch {
      // Best effort: the Lease expires anyway.
    }
  }
}
