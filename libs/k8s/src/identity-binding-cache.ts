/**
 * Disk identity bindings read from a watch cache (docs/adr/0038): strict identity binding looked up
 * every ticket's disk with a GET (a miss for every first join); the joinservice now lists the
 * binding namespace's ConfigMaps once and follows a watch, so a lookup costs no API call.
 *
 * Consistency: creation is unchanged (create-only through the apiserver, whose 409 decides a race).
 * A lookup goes to the apiserver (a GET) whenever the cache is not in sync: before the first list,
 * after a watch error (until a new list) and when a watch stalls (no end within its timeout plus a
 * grace). While in sync the cache lags the apiserver by the watch latency (milliseconds): a binding
 * another replica created that instant looks absent, so the join's create-only write answers
 * `exists` (a retryable race, as when two joins overlap; the entry is fetched at once so the retry
 * sees it), and a binding an operator deleted that instant still counts for that long.
 */
import * as k8s from '@kubernetes/client-node';
import type { KubeClients } from './client.js';
import { fromApiError } from './errors.js';
import { BINDING_NAMESPACE, BINDING_PREFIX, bindingFromData, identityBindingName, type IdentityBinding } from './identity-bindings.js';

/** A list and a watch of the binding namespace's ConfigMaps; {@link configMapFeed} is the apiserver's. */
export interface ConfigMapFeed {
  list(): Promise<{ items: k8s.V1ConfigMap[]; resourceVersion: string }>;
  /** Watches from `resourceVersion`; `onDone` gets the error, or nothing when the server ended the watch. */
  watch(resourceVersion: string, onEvent: (type: string, object: k8s.V1ConfigMap) => void, onDone: (err?: unknown) => void): Promise<{ abort(): void }>;
}

/** The direct store the cache falls back to and creates through. */
export interface DirectIdentityBindings {
  get(diskUuid: string): Promise<IdentityBinding | undefined>;
  create(binding: IdentityBinding): Promise<'created' | 'exists'>;
}

/** Options of {@link WatchedIdentityBindings}. */
export interface WatchedIdentityBindingsOptions {
  logger?: { warn(message: string, fields?: Record<string, unknown>): void };
  /** Delay before a new list after a failure. Default 1 s. */
  retryMs?: number;
  /** The server ends each watch after this; default 60 s. */
  watchTimeoutS?: number;
  /** A watch not ended this long after its timeout counts as stalled. Default 15 s. */
  stallGraceMs?: number;
}

/** The server's watch timeout of {@link configMapFeed} and the cache's stall bound. */
const DEFAULT_WATCH_TIMEOUT_S = 60;

/** Create-only identity bindings with lookups from a watch cache (see module comment). */
export class WatchedIdentityBindings {
  #bindings = new Map<string, IdentityBinding>();
  #synced = false;
  #stopped = true;
  #resourceVersion = '';
  #watch: { abort(): void } | undefined;
  #generation = 0;
  #stallTimer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly direct: DirectIdentityBindings,
    private readonly feed: ConfigMapFeed,
    private readonly o: WatchedIdentityBindingsOptions = {},
  ) {}

  /** Whether lookups are answered from the cache (else by a GET). */
  get synced(): boolean {
    return this.#synced;
  }

  /** Lists and starts watching; lookups use the apiserver until the list is in. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    void this.#sync();
  }

  /** Ends the watch; lookups go to the apiserver again. */
  stop(): void {
    this.#stopped = true;
    this.#lost(undefined);
  }

  /** The binding of `diskUuid`: from the cache when in sync, else from the apiserver. */
  async get(diskUuid: string): Promise<IdentityBinding | undefined> {
    if (!this.#synced) return this.direct.get(diskUuid);
    return this.#bindings.get(identityBindingName(diskUuid));
  }

  /** Creates through the apiserver (create-only); either answer updates the cache at once. */
  async create(binding: IdentityBinding): Promise<'created' | 'exists'> {
    const result = await this.direct.create(binding);
    const name = identityBindingName(binding.diskUuid);
    if (result === 'created') {
      this.#bindings.set(name, binding);
    } else {
      const current = await this.direct.get(binding.diskUuid);
      if (current) this.#bindings.set(name, current);
    }
    return result;
  }

  async #sync(): Promise<void> {
    const generation = ++this.#generation;
    try {
      const { items, resourceVersion } = await this.feed.list();
      if (generation !== this.#generation || this.#stopped) return;
      this.#bindings = new Map();
      for (const cm of items) this.#apply('ADDED', cm);
      this.#resourceVersion = resourceVersion;
      this.#synced = true;
      await this.#startWatch(generation);
    } catch (err) {
      if (generation === this.#generation) this.#retry(err);
    }
  }

  async #startWatch(generation: number): Promise<void> {
    const timeoutS = this.o.watchTimeoutS ?? DEFAULT_WATCH_TIMEOUT_S;
    clearTimeout(this.#stallTimer);
    this.#stallTimer = setTimeout(() => generation === this.#generation && this.#retry(new Error(`watch did not end within ${timeoutS} s`)), timeoutS * 1000 + (this.o.stallGraceMs ?? 15_000));
    this.#stallTimer.unref();
    const watch = await this.feed.watch(
      this.#resourceVersion,
      (type, cm) => generation === this.#generation && this.#onEvent(type, cm),
      (err) => {
        if (generation !== this.#generation || this.#stopped) return;
        if (err) this.#retry(err);
        else void this.#startWatch(generation).catch((e: unknown) => generation === this.#generation && this.#retry(e));
      },
    );
    if (generation === this.#generation) this.#watch = watch;
    else watch.abort();
  }

  #onEvent(type: string, cm: k8s.V1ConfigMap): void {
    if (type === 'ERROR') {
      // 410 Gone (resource version too old) and any other watch error: list again.
      this.#retry(new Error(`watch error: ${(cm as { message?: string }).message ?? 'unknown'}`));
      return;
    }
    this.#apply(type, cm);
    const rv = cm.metadata?.resourceVersion;
    if (rv) this.#resourceVersion = rv;
  }

  #apply(type: string, cm: k8s.V1ConfigMap): void {
    const name = cm.metadata?.name ?? '';
    if (!name.startsWith(BINDING_PREFIX)) return;
    if (type === 'DELETED') {
      this.#bindings.delete(name);
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    const binding = bindingFromData(cm.data, name.slice(BINDING_PREFIX.length));
    if (binding) this.#bindings.set(name, binding);
  }

  /** Out of sync after `err`: lookups go to the apiserver until a new list is in. */
  #retry(err: unknown): void {
    this.#lost(err);
    if (this.#stopped) return;
    this.#retryTimer = setTimeout(() => void this.#sync(), this.o.retryMs ?? 1000);
    this.#retryTimer.unref();
  }

  #lost(err: unknown): void {
    const wasSynced = this.#synced;
    this.#generation++;
    this.#synced = false;
    this.#resourceVersion = '';
    clearTimeout(this.#stallTimer);
    clearTimeout(this.#retryTimer);
    this.#watch?.abort();
    this.#watch = undefined;
    if (err !== undefined && wasSynced) this.o.logger?.warn('identity binding cache out of sync; lookups use the API server until it lists again', { reason: (err as Error)?.message ?? String(err) });
  }
}

/** The binding namespace's ConfigMaps from the apiserver: one list, then watches of `timeoutS` each. */
export function configMapFeed(clients: Pick<KubeClients, 'config' | 'core'>, timeoutS = DEFAULT_WATCH_TIMEOUT_S): ConfigMapFeed {
  const watcher = new k8s.Watch(clients.config);
  return {
    async list() {
      try {
        const list = await clients.core.listNamespacedConfigMap({ namespace: BINDING_NAMESPACE });
        return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? '' };
      } catch (err) {
        throw fromApiError(err, `listing ConfigMaps in ${BINDING_NAMESPACE}`);
      }
    },
    async watch(resourceVersion, onEvent, onDone) {
      const controller = await watcher.watch(
        `/api/v1/namespaces/${BINDING_NAMESPACE}/configmaps`,
        { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: timeoutS },
        (type, object) => onEvent(type, object as k8s.V1ConfigMap),
        (err) => onDone(err ?? undefined),
      );
      return { abort: () => controller.abort() };
    },
  };
}
