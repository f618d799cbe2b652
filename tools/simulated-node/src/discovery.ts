import { createHash, createHmac, timingSafeEqual, X509Certificate } from 'node:crypto';
import { parse } from 'yaml';
import { AsterismError } from '@asterism/errors';
import { httpsGetText } from '@asterism/k8s';

/** Why a bootstrap-token discovery failed (the node must not trust that API server). */
export class DiscoveryError extends AsterismError<'DISCOVERY_UNAVAILABLE' | 'DISCOVERY_UNSIGNED' | 'DISCOVERY_SIGNATURE_INVALID' | 'DISCOVERY_CA_MISMATCH' | 'DISCOVERY_MALFORMED'> {}

/** What discovery establishes: the API server URL and the CA that signs its certificate. */
export interface DiscoveredCluster {
  server: string;
  caPem: string;
}

/** `sha256:<hex>` pins of every CA in a PEM bundle (kubeadm pubkeypin over the SPKI DER). */
export function caPins(pemBundle: string): string[] {
  const blocks = pemBundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => `sha256:${createHash('sha256').update(new X509Certificate(b).publicKey.export({ type: 'spki', format: 'der' })).digest('hex')}`);
}

/** Verifies a detached HS256 JWS (`<header>..<signature>`) over `payload` with the token secret. */
export function verifyDetachedJws(jws: string, payload: string, secret: string): boolean {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '' || !parts[0] || !parts[2]) return false;
  let header: { alg?: unknown };
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as { alg?: unknown };
  } catch {
    return false;
  }
  if (header.alg !== 'HS256') return false;
  const want = createHmac('sha256', secret).update(`${parts[0]}.${Buffer.from(payload).toString('base64url')}`).digest();
  const got = Buffer.from(parts[2], 'base64url');
  return got.length === want.length && timingSafeEqual(got, want);
}

function getJson(url: string, signal?: AbortSignal): Promise<{ status: number; body: string }> {
  // Discovery reads cluster-info before any CA is trusted: the JWS and the CA pin verify it.
  return httpsGetText(url, { rejectUnauthorized: false, ...(signal ? { signal } : {}) });
}

/**
 * kubeadm-style bootstrap-token discovery against `endpoint` (host:port): reads kube-public/
 * cluster-info anonymously, waits for the bootstrapsigner's signature for this token id, verifies
 * it with the token secret, and checks the embedded CA against the pinned hashes.
 */
export async function discoverCluster(endpoint: string, token: string, caCertHashes: string[], opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<DiscoveredCluster> {
  const m = /^([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(token);
  if (!m) throw new DiscoveryError('DISCOVERY_MALFORMED', 'bootstrap token has the wrong format');
  const [, id, secret] = m as unknown as [string, string, string];
  const url = `https://${endpoint}/api/v1/namespaces/kube-public/configmaps/cluster-info`;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last = 'no answer';
  for (;;) {
    opts.signal?.throwIfAborted();
    let data: Record<string, string> | undefined;
    try {
      const res = await getJson(url, opts.signal);
      if (res.status === 200) data = (JSON.parse(res.body) as { data?: Record<string, string> }).data ?? {};
      else last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    const kubeconfig = data?.kubeconfig;
    const jws = data?.[`jws-kubeconfig-${id}`];
    if (kubeconfig && jws) {
      if (!verifyDetachedJws(jws, kubeconfig, secret)) throw new DiscoveryError('DISCOVERY_SIGNATURE_INVALID', `cluster-info signature for token ${id} does not verify`);
      let cfg: { clusters?: Array<{ cluster?: { server?: string; 'certificate-authority-data'?: string } }> };
      try {
        cfg = parse(kubeconfig) as typeof cfg;
      } catch (err) {
        throw new DiscoveryError('DISCOVERY_MALFORMED', `cluster-info kubeconfig: ${(err as Error).message}`);
      }
      const cluster = cfg.clusters?.[0]?.cluster;
      const caData = cluster?.['certificate-authority-data'];
      if (!cluster?.server || !caData) throw new DiscoveryError('DISCOVERY_MALFORMED', 'cluster-info kubeconfig has no server or CA');
      const caPem = Buffer.from(caData, 'base64').toString('utf8');
      const pins = caPins(caPem);
      if (!pins.some((p) => caCertHashes.includes(p))) {
        throw new DiscoveryError('DISCOVERY_CA_MISMATCH', `cluster CA pin ${pins.join(',') || '(none)'} is not among the expected ${caCertHashes.join(',')}`, {
          details: { expected: caCertHashes, actual: pins },
        });
      }
      return { server: `https://${endpoint}`, caPem };
    }
    if (kubeconfig && !jws) last = `cluster-info not yet signed for token ${id}`;
    if (Date.now() > deadline) {
      throw new DiscoveryError(kubeconfig ? 'DISCOVERY_UNSIGNED' : 'DISCOVERY_UNAVAILABLE', `discovery at ${endpoint} failed: ${last}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
