/**
 * Who may call the upgrade agent (docs/adr/0042-upgrade-agent.md): whoever holds a client
 * certificate of the cluster's Kubernetes CA with organisation `system:masters` (the admin
 * kubeconfig `asterism init` wrote) and its key. The caller signs each request together with a
 * single-use nonce this agent issued, so a recorded request cannot be replayed.
 */
import { randomBytes, verify, X509Certificate } from 'node:crypto';
import { AsterismError } from '@asterism/errors';
import { upgradeSigningPayload, type upgradeagent } from '@asterism/proto';

/** Why a caller was refused. */
export class CallerAuthError extends AsterismError<'CALLER_NOT_AUTHENTICATED' | 'CALLER_NOT_ADMIN'> {}

const ADMIN_ORGANISATION = 'system:masters';

/** Single-use nonces, each valid for `ttlMs`; at most `max` outstanding (the oldest are dropped). */
export class NonceBook {
  readonly #issued = new Map<string, number>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly max = 32,
    private readonly now: () => number = Date.now,
  ) {}

  /** A fresh 32-byte nonce. */
  issue(): Buffer {
    const nonce = randomBytes(32);
    this.#issued.set(nonce.toString('hex'), this.now() + this.ttlMs);
    while (this.#issued.size > this.max) this.#issued.delete(this.#issued.keys().next().value!);
    return nonce;
  }

  /** True once for a nonce this book issued that has not expired. */
  consume(nonce: Uint8Array): boolean {
    const key = Buffer.from(nonce).toString('hex');
    const until = this.#issued.get(key);
    this.#issued.delete(key);
    return until !== undefined && until >= this.now();
  }
}

/**
 * Checks `req`'s nonce (from `nonces`), certificate (issued and signed by `caPem`, valid now,
 * organisation system:masters) and signature; throws CallerAuthError otherwise. Returns the
 * certificate's subject for the log.
 */
export function authenticateCaller(req: upgradeagent.UpgradeRequest, nonces: NonceBook, caPem: string, now = new Date()): string {
  if (!nonces.consume(req.nonce)) throw new CallerAuthError('CALLER_NOT_AUTHENTICATED', 'the request carries no valid nonce of this agent (call Challenge first; a nonce is used once and expires after a minute)');
  let cert: X509Certificate;
  let ca: X509Certificate;
  try {
    cert = new X509Certificate(req.adminCertificate);
    ca = new X509Certificate(caPem);
  } catch (err) {
    throw new CallerAuthError('CALLER_NOT_AUTHENTICATED', `the admin certificate does not parse: ${(err as Error).message}`);
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) throw new CallerAuthError('CALLER_NOT_AUTHENTICATED', "the admin certificate is not signed by the cluster's Kubernetes CA");
  if (now < new Date(cert.validFrom) || now > new Date(cert.validTo)) throw new CallerAuthError('CALLER_NOT_AUTHENTICATED', `the admin certificate is not valid now (${cert.validFrom} - ${cert.validTo})`);
  const organisations = cert.subject.split('\n').filter((l) => l.startsWith('O=')).map((l) => l.slice(2));
  if (!organisations.includes(ADMIN_ORGANISATION)) throw new CallerAuthError('CALLER_NOT_ADMIN', `the certificate's subject "${cert.subject.replace(/\n/g, ', ')}" is not in ${ADMIN_ORGANISATION}`);
  const algorithm = cert.publicKey.asymmetricKeyType === 'ed25519' ? null : 'sha256';
  let ok = false;
  try {
    ok = verify(algorithm, upgradeSigningPayload(req), cert.publicKey, req.signature);
  } catch {
    ok = false;
  }
  if (!ok) throw new CallerAuthError('CALLER_NOT_AUTHENTICATED', "the request's signature does not verify with the admin certificate's key");
  return cert.subject.replace(/\n/g, ', ');
}
