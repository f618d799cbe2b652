/**
 * Downloads one artifact into a file while hashing it (docs/protocol/components.md): http(s)
 * through fetch, `file:` from the node's filesystem, `data:` from the URL itself. Every attempt has
 * a time limit and a size limit; network failures and server errors are retried a few times with a
 * growing pause. The caller decides what the hash means; this module only reports it.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ComponentInstallError, type ComponentSpec } from './component-spec.js';

/** Limits of one download. */
export interface FetchLimits {
  /** Largest accepted artifact (default 512 MiB: kubelet and kubectl are ~60-90 MB). */
  maxBytes?: number;
  /** Time limit of one attempt (default 5 min). */
  attemptTimeoutMs?: number;
  /** Attempts per artifact (default 3). */
  attempts?: number;
  /** Pause before the second attempt, doubled each time (default 1 s). */
  retryDelayMs?: number;
}

/** What a finished download produced. */
export interface FetchedArtifact {
  /** Lower-case hex SHA-256 of exactly the bytes written. */
  sha256: string;
  bytes: number;
}

const DEFAULTS = { maxBytes: 512 * 1024 * 1024, attemptTimeoutMs: 5 * 60_000, attempts: 3, retryDelayMs: 1000 };

/** Fetches `spec.url` into `dest` (created or replaced), retrying transient failures. */
export async function fetchArtifact(spec: ComponentSpec, dest: string, limits: FetchLimits = {}, signal?: AbortSignal): Promise<FetchedArtifact> {
  const l = { ...DEFAULTS, ...limits };
  let last: unknown;
  for (let attempt = 1; attempt <= l.attempts; attempt++) {
    if (attempt > 1) await pause(l.retryDelayMs * 2 ** (attempt - 2), signal);
    try {
      return await fetchOnce(spec, dest, l, signal);
    } catch (err) {
      await rm(dest, { force: true });
      last = err;
      if (err instanceof ComponentInstallError || signal?.aborted) throw err;
    }
  }
  throw new ComponentInstallError('ARTIFACT_UNREACHABLE', `component ${spec.name}: fetching ${displayUrl(spec.url)} failed after ${l.attempts} attempts: ${(last as Error).message}`, {
    details: { component: spec.name, url: displayUrl(spec.url), attempts: l.attempts },
    cause: last,
  });
}

async function fetchOnce(spec: ComponentSpec, dest: string, l: typeof DEFAULTS, outer?: AbortSignal): Promise<FetchedArtifact> {
  const timeout = AbortSignal.timeout(l.attemptTimeoutMs);
  const signal = outer ? AbortSignal.any([outer, timeout]) : timeout;
  const source = await open(spec, signal, l.maxBytes);
  const hash = createHash('sha256');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > l.maxBytes) return done(tooLarge(spec, l.maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(source, count, createWriteStream(dest, { mode: 0o600 }), { signal });
  return { sha256: hash.digest('hex'), bytes };
}

/** A readable of the artifact's bytes; http statuses other than 2xx are thrown (and retried). */
async function open(spec: ComponentSpec, signal: AbortSignal, maxBytes: number): Promise<Readable> {
  const { url } = spec;
  if (url.protocol === 'file:') return createReadStream(fileURLToPath(url));
  if (url.protocol === 'data:') return Readable.from([decodeDataUrl(spec)]);
  const res = await fetch(url, { signal, redirect: 'follow' });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status} ${res.statusText}`);
  const length = Number(res.headers.get('content-length') ?? '0');
  if (length > maxBytes) {
    await res.body.cancel();
    throw tooLarge(spec, maxBytes);
  }
  return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
}

/** The payload of a `data:` URL (base64 or percent-encoded). */
function decodeDataUrl(spec: ComponentSpec): Buffer {
  const text = spec.url.href;
  const comma = text.indexOf(',');
  if (comma < 0) throw new ComponentInstallError('COMPONENT_INVALID', `component ${spec.name}: data URL without a comma`, { details: { component: spec.name } });
  const meta = text.slice(5, comma);
  const payload = text.slice(comma + 1);
  return meta.endsWith(';base64') ? Buffer.from(payload, 'base64') : Buffer.from(decodeURIComponent(payload));
}

function tooLarge(spec: ComponentSpec, maxBytes: number): ComponentInstallError {
  return new ComponentInstallError('ARTIFACT_TOO_LARGE', `component ${spec.name}: artifact is larger than ${maxBytes} bytes`, {
    details: { component: spec.name, url: displayUrl(spec.url), maxBytes },
  });
}

/** The URL for logs and errors: no credentials, no query, and `data:` URLs shortened. */
export function displayUrl(url: URL): string {
  if (url.protocol === 'data:') return 'data:...';
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason as Error)), { once: true });
  });
}
