/**
 * A KubeConfig whose clients share one keep-alive HTTPS agent. @kubernetes/client-node 1.4 builds
 * a new `https.Agent` for every request, so every API call pays a TCP connect and a full TLS
 * handshake (client and API server CPU, latency). This subclass lets the library build its
 * per-request agent as usual (cheap: no socket yet) and then substitutes the shared agent, as long
 * as the TLS material is unchanged; when it changes (rotated client certificate or CA re-read from
 * a file), a new shared agent is created and the old one is destroyed after a grace period.
 */
import { createHash } from 'node:crypto';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';

/** How long a superseded agent keeps its connections for in-flight requests and watches. */
const RETIRE_AFTER_MS = 60_000;
/**
 * Idle pooled connections are closed after this long, well before the API server closes idle
 * connections itself (Go's server idle timeout), so a request never races a server-side close
 * (ECONNRESET). Node's agent only destroys FREE sockets on this timeout; busy ones are untouched.
 */
export const IDLE_SOCKET_MS = 30_000;

type AgentLike = NonNullable<ReturnType<k8s.RequestContext['getAgent']>>;

/** True for a plain https.Agent (proxy agents subclass it and are left alone). */
function isPlainHttpsAgent(agent: unknown): agent is https.Agent {
  return agent instanceof https.Agent && Object.getPrototypeOf(agent) === https.Agent.prototype;
}

/** Digest of everything that makes two agents' TLS connections interchangeable. */
function tlsIdentity(options: https.AgentOptions): string {
  const h = createHash('sha256');
  for (const part of [options.ca, options.cert, options.key, options.pfx]) {
    for (const item of [part ?? []].flat()) {
      const value = typeof item === 'object' && item !== null && 'buf' in item ? item.buf : item;
      h.update(typeof value === 'string' ? value : Buffer.from(value as Uint8Array)).update('\0');
    }
    h.update('|');
  }
  h.update(`${options.passphrase ?? ''}|${String(options.rejectUnauthorized)}|${options.servername ?? ''}`);
  return h.digest('hex');
}

/** A KubeConfig whose API clients reuse one keep-alive connection pool (see module comment). */
export class KeepAliveKubeConfig extends k8s.KubeConfig {
  #shared: { identity: string; agent: https.Agent } | undefined;
  readonly #idleSocketMs: number;

  constructor(options: { idleSocketMs?: number } = {}) {
    super();
    this.#idleSocketMs = options.idleSocketMs ?? IDLE_SOCKET_MS;
  }

  /** The KubeConfig `source` as a KeepAliveKubeConfig (same clusters, users, contexts). */
  static from(source: k8s.KubeConfig, options: { idleSocketMs?: number } = {}): KeepAliveKubeConfig {
    if (source instanceof KeepAliveKubeConfig) return source;
    const kc = new KeepAliveKubeConfig(options);
    kc.loadFromOptions({ clusters: source.clusters, users: source.users, contexts: source.contexts, currentContext: source.currentContext });
    return kc;
  }

  override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const agent = context.getAgent();
    if (agent) context.setAgent(this.#sharedFor(agent));
  }

  override async applyToFetchOptions(opts: https.RequestOptions): Promise<Awaited<ReturnType<k8s.KubeConfig['applyToFetchOptions']>>> {
    const init = await super.applyToFetchOptions(opts);
    if (init.agent && typeof init.agent !== 'function') init.agent = this.#sharedFor(init.agent as AgentLike);
    return init;
  }

  /** Closes the pooled connections (for a clean process exit; later calls open new ones). */
  destroy(): void {
    this.#shared?.agent.destroy();
    this.#shared = undefined;
  }

  #sharedFor(fresh: AgentLike): AgentLike {
    if (!isPlainHttpsAgent(fresh)) return fresh;
    const identity = tlsIdentity(fresh.options);
    if (this.#shared?.identity === identity) return this.#shared.agent;
    const previous = this.#shared?.agent;
    if (previous) setTimeout(() => previous.destroy(), RETIRE_AFTER_MS).unref();
    const agent = new https.Agent({ ...fresh.options, keepAlive: true, timeout: this.#idleSocketMs });
    this.#shared = { identity, agent };
    return agent;
  }
}
