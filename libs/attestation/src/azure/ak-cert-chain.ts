/**
 * The azure-trustedlaunch AK certificate chain (docs/protocol/cloud-vtpm-variants.md §2): the AK
 * certificate, the issuing CA the document carries (or fetched from the certificate's
 * "CA Issuers" URLs), further issuers fetched the same way, up to a CONFIGURED root. Fetched
 * certificates are only untrusted links: every signature is checked up to the root, and the
 * root itself must be valid at the verification time (ROOT_EXPIRED otherwise).
 */
import type { X509Certificate } from 'node:crypto';
import { AttestationError } from '../errors.js';
import { checkChainSignatures, cn } from '../tdx/pki.js';
import type { CertificateFetcher } from '../cloud/http.js';
import { parseCertificate } from '../cloud/keys.js';

/** At most this many issuers are fetched above the document's certificates. */
const MAX_FETCHED_LINKS = 3;

/** The "CA Issuers" URLs of a certificate's Authority Information Access extension. */
export function caIssuerUrls(cert: X509Certificate): string[] {
  return [...(cert.infoAccess ?? '').matchAll(/^CA Issuers - URI:(\S+)$/gm)].map((m) => m[1]!);
}

/**
 * The first issuing CA certificate that downloads and parses from `cert`'s "CA Issuers" URLs
 * (each failure skips to the next URL, as the reference's issuer does).
 */
export async function fetchIssuer(cert: X509Certificate, fetcher: CertificateFetcher, signal?: AbortSignal): Promise<X509Certificate | undefined> {
  for (const url of caIssuerUrls(cert)) {
    signal?.throwIfAborted();
    try {
      return parseCertificate(await fetcher(url, signal), `CA certificate from ${url}`);
    } catch {
      // next URL
    }
  }
  return undefined;
}

/** Inputs of {@link verifyAkCertificateChain}. */
export interface AkChainInput {
  readonly akCert: X509Certificate;
  /** Intermediates from the document (leaf-most first). */
  readonly intermediates: readonly X509Certificate[];
  /** Configured trust anchors. */
  readonly roots: readonly X509Certificate[];
  readonly at: Date;
  /** Follows "CA Issuers" URLs when the document's chain stops below a root. */
  readonly fetcher?: CertificateFetcher;
}

const issuedBy = (cert: X509Certificate, issuer: X509Certificate) => cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

/**
 * Verifies the AK certificate up to one of the configured roots at `at`. Failures:
 * CERT_CHAIN_INVALID (no configured root issues the chain, a broken signature, a non-CA link),
 * ROOT_EXPIRED (the root that issues the chain is outside its validity), CERT_EXPIRED (the AK
 * certificate or an intermediate is).
 */
export async function verifyAkCertificateChain(input: AkChainInput, signal?: AbortSignal): Promise<X509Certificate> {
  const chain = [input.akCert, ...input.intermediates];
  let root = rootOf(chain, input.roots);
  for (let fetched = 0; !root && input.fetcher && fetched < MAX_FETCHED_LINKS; fetched++) {
    const next = await fetchIssuer(chain[chain.length - 1]!, input.fetcher, signal);
    if (!next) break;
    chain.push(next);
    root = rootOf(chain, input.roots);
  }
  if (!root) {
    const top = chain[chain.length - 1]!;
    throw new AttestationError('CERT_CHAIN_INVALID', `AK certificate chain: "${issuerCn(top)}" (issuer of "${cn(top)}") is not a configured root`, {
      details: { chain: 'AK certificate', reason: 'untrusted-root', issuer: issuerCn(top), roots: input.roots.map(cn) },
    });
  }
  checkRootValidity(root, input.at);
  const links = chain.filter((c) => !c.raw.equals(root.raw));
  checkChainSignatures(links, root, 'AK certificate chain');
  links.forEach((cert, i) => {
    if (input.at < new Date(cert.validFrom) || input.at > new Date(cert.validTo)) {
      throw new AttestationError('CERT_EXPIRED', `AK certificate chain: "${cn(cert)}" is not valid at ${input.at.toISOString()} (valid ${cert.validFrom} to ${cert.validTo})`, {
        details: { chain: 'AK certificate', index: i, subject: cn(cert), notBefore: cert.validFrom, notAfter: cert.validTo },
      });
    }
  });
  return root;
}

/** The configured root that issues the top of `chain` (or that the chain already ends in). */
function rootOf(chain: readonly X509Certificate[], roots: readonly X509Certificate[]): X509Certificate | undefined {
  const top = chain[chain.length - 1]!;
  return roots.find((r) => r.raw.equals(top.raw)) ?? roots.find((r) => issuedBy(top, r));
}

/** ROOT_EXPIRED when the configured root is outside its validity at `at` (e.g. the reference's AME root after 2026-05-24). */
export function checkRootValidity(root: X509Certificate, at: Date): void {
  const from = new Date(root.validFrom);
  const to = new Date(root.validTo);
  if (at < from || at > to) {
    throw new AttestationError('ROOT_EXPIRED', `the configured AK root "${cn(root)}" is not valid at ${at.toISOString()} (valid ${from.toISOString()} to ${to.toISOString()}); configure a current root`, {
      details: { root: cn(root), notBefore: from.toISOString(), notAfter: to.toISOString(), at: at.toISOString() },
    });
  }
}

function issuerCn(cert: X509Certificate): string {
  return /(?:^|\n)CN=([^\n]*)/.exec(cert.issuer)?.[1] ?? cert.issuer;
}
