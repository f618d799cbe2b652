import { X509Certificate } from 'node:crypto';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';

/** ConfigMap holding the cached AMD certificates (docs/protocol/join-ticket.md). */
export const CERT_CACHE_CONFIGMAP = 'sev-snp-cert-cache';
export const CERT_CACHE_NAMESPACE = 'kube-system';

/** The AMD signing key (ASK/ASVK) and root key (ARK), PEM. */
export interface AmdCertChain {
  ask: string | null;
  ark: string | null;
}

/** Failure to build the certificate cache. */
export class CertCacheError extends AsterismError<'CERT_CACHE_INVALID' | 'KDS_UNAVAILABLE' | 'K8S_UNAVAILABLE'> {}

/** ConfigMap access the cache needs (ConfigMapStore implements it). */
export interface CertCacheStore {
  get(namespace: string, name: string): Promise<{ data?: Record<string, string> } | null>;
  create(namespace: string, name: string, data: Record<string, string>): Promise<void>;
  updateKeys(namespace: string, name: string, data: Record<string, string>): Promise<void>;
}

/** Source of the product's chain (AMD KDS `.../<vcek|vlek>/v1/Milan/cert_chain`, ASK then ARK). */
export interface KdsChainSource {
  certChain(signer: 'vcek' | 'vlek'): Promise<string>;
}

function pemBlocks(text: string): string[] {
  return [...text.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => `${m[0]}\n`);
}

/** Parses one PEM certificate (or returns null for empty input); garbage is CERT_CACHE_INVALID. */
export function parseCachedCert(pem: string | undefined | null, what: string): string | null {
  if (!pem || pem.trim() === '') return null;
  const blocks = pemBlocks(pem);
  if (blocks.length !== 1) throw new CertCacheError('CERT_CACHE_INVALID', `cached ${what} is not exactly one PEM certificate`, { details: { what } });
  try {
    new X509Certificate(blocks[0]!);
  } catch (err) {
    throw new CertCacheError('CERT_CACHE_INVALID', `cached ${what} does not parse: ${(err as Error).message}`, { details: { what }, cause: err });
  }
  return blocks[0]!;
}

/** Splits a KDS cert_chain response into ASK and ARK by subject common name. */
export function splitKdsChain(pem: string): AmdCertChain {
  const out: AmdCertChain = { ask: null, ark: null };
  for (const block of pemBlocks(pem)) {
    const cn = /CN=([^\n,]+)/.exec(new X509Certificate(block).subject)?.[1]?.trim();
    if (cn === 'ARK-Milan') out.ark = block;
    else if (cn === 'SEV-Milan' || cn === 'SEV-VLEK-Milan') out.ask = block;
  }
  if (!out.ask && !out.ark) throw new CertCacheError('KDS_UNAVAILABLE', 'AMD KDS returned no usable certificates');
  return out;
}

/**
 * Builds the SEV-SNP certificate cache: use the ConfigMap when it holds both certificates,
 * otherwise fetch the chain from KDS, fill only what is missing, and create or update the
 * ConfigMap (re-reading it when another replica created it first).
 */
export class CertCache {
  constructor(
    private readonly store: CertCacheStore,
    private readonly kds: KdsChainSource,
    private readonly logger: Logger,
  ) {}

  async load(signer: 'vcek' | 'vlek'): Promise<AmdCertChain> {
    const existing = await this.read();
    if (existing.chain.ask && existing.chain.ark) return existing.chain;
    let fetched: AmdCertChain;
    try {
      fetched = splitKdsChain(await this.kds.certChain(signer));
    } catch (err) {
      if (err instanceof CertCacheError) throw err;
      throw new CertCacheError('KDS_UNAVAILABLE', `fetching AMD certificate chain: ${(err as Error).message}`, { cause: err });
    }
    const chain: AmdCertChain = { ask: existing.chain.ask ?? fetched.ask, ark: existing.chain.ark ?? fetched.ark };
    const data = { ask: chain.ask ?? '', ark: chain.ark ?? '' };
    try {
      if (!existing.exists) {
        try {
          await this.store.create(CERT_CACHE_NAMESPACE, CERT_CACHE_CONFIGMAP, data);
        } catch (err) {
          if ((err as { code?: string }).code !== 'K8S_ALREADY_EXISTS') throw err;
          this.logger.info('certificate cache created concurrently, re-reading it');
          return (await this.read()).chain;
        }
      } else {
        await this.store.updateKeys(CERT_CACHE_NAMESPACE, CERT_CACHE_CONFIGMAP, data);
      }
    } catch (err) {
      throw new CertCacheError('K8S_UNAVAILABLE', `storing certificate cache: ${(err as Error).message}`, { cause: err });
    }
    this.logger.info('certificate cache filled from AMD KDS', { signer, askFromKds: !existing.chain.ask, arkFromKds: !existing.chain.ark });
    return chain;
  }

  /**
   * What the ConfigMap holds, without contacting KDS and without writing (offline mode): missing
   * certificates are null; a missing ConfigMap is an empty chain.
   */
  async cached(): Promise<AmdCertChain> {
    return (await this.read()).chain;
  }

  private async read(): Promise<{ exists: boolean; chain: AmdCertChain }> {
    let cm: { data?: Record<string, string> } | null;
    try {
      cm = await this.store.get(CERT_CACHE_NAMESPACE, CERT_CACHE_CONFIGMAP);
    } catch (err) {
      throw new CertCacheError('K8S_UNAVAILABLE', `reading certificate cache: ${(err as Error).message}`, { cause: err });
    }
    if (!cm) return { exists: false, chain: { ask: null, ark: null } };
    return { exists: true, chain: { ask: parseCachedCert(cm.data?.ask, 'ASK'), ark: parseCachedCert(cm.data?.ark, 'ARK') } };
  }
}
