/**
 * The AMD chain ARK -> ASK/ASVK -> V[CL]EK (docs/protocol/sev-snp.md §5), verified at an explicit
 * time: subject/issuer names per role, RSASSA-PSS with SHA-384 on every certificate, each
 * signature by its parent's key, every certificate valid at that time. The trust anchor is the
 * configured ARK; nothing is trusted because a peer or a cache sent it.
 */
import { AttestationError } from '../errors.js';
import { OID_RSASSA_PSS, OID_SHA384, type AmdCertificate, type SignerCertificate } from './certs.js';
import { AMD_PRODUCT_LINES, amdNames, type AmdNames, type AmdProductLine } from './lines.js';

/**
 * Remembers signature checks (child fingerprint + parent fingerprint -> ok) so that a warm
 * validation does not repeat RSA verifications; validity periods are checked every time.
 */
export class SignatureMemo {
  readonly #ok = new Set<string>();
  readonly #max: number;

  constructor(max = 4096) {
    this.#max = max;
  }

  /** Whether `child` is signed by `parent`'s key (memoised when true). */
  signedBy(child: AmdCertificate, parent: AmdCertificate): boolean {
    const id = `${child.fingerprint}/${parent.fingerprint}`;
    if (this.#ok.has(id)) return true;
    let ok: boolean;
    try {
      ok = child.x509.verify(parent.publicKey);
    } catch {
      ok = false;
    }
    if (ok) {
      if (this.#ok.size >= this.#max) this.#ok.clear();
      this.#ok.add(id);
    }
    return ok;
  }
}

const chainInvalid = (message: string, details: Record<string, unknown>) => new AttestationError('CERT_CHAIN_INVALID', message, { details });

function requirePss384(cert: AmdCertificate, role: string): void {
  if (cert.signature.oid !== OID_RSASSA_PSS || cert.signature.pssHash !== OID_SHA384) {
    throw chainInvalid(`${role} ${cert.subjectCn} is signed with ${cert.signature.oid}${cert.signature.pssHash ? `/${cert.signature.pssHash}` : ''}, expected RSASSA-PSS with SHA-384`, {
      certificate: role,
      field: 'signatureAlgorithm',
      expected: `${OID_RSASSA_PSS}/${OID_SHA384}`,
      actual: cert.signature.oid,
    });
  }
}

/** CERT_EXPIRED unless notBefore <= at <= notAfter; `state` says "not yet valid" or "expired", with both dates. */
export function requireValidAt(cert: AmdCertificate, role: string, at: Date): void {
  if (at < cert.notBefore || at > cert.notAfter) {
    const state = at < cert.notBefore ? 'not yet valid' : 'expired';
    throw new AttestationError('CERT_EXPIRED', `${role} ${cert.subjectCn} is ${state} at ${at.toISOString()} (valid ${cert.notBefore.toISOString()} to ${cert.notAfter.toISOString()})`, {
      details: { certificate: role, state, notBefore: cert.notBefore.toISOString(), notAfter: cert.notAfter.toISOString(), verifiedAt: at.toISOString() },
    });
  }
}

function requireNames(cert: AmdCertificate, role: string, subject: string, issuer: string): void {
  if (cert.subjectCn !== subject || cert.issuerCn !== issuer) {
    throw chainInvalid(`${role} is ${JSON.stringify(cert.subjectCn)} issued by ${JSON.stringify(cert.issuerCn)}, expected ${subject} issued by ${issuer}`, {
      certificate: role,
      expected: { subject, issuer },
      actual: { subject: cert.subjectCn, issuer: cert.issuerCn },
    });
  }
}

function requireSignedBy(memo: SignatureMemo, child: AmdCertificate, role: string, parent: AmdCertificate, parentRole: string): void {
  if (!memo.signedBy(child, parent)) {
    throw chainInvalid(`${role} ${child.subjectCn} is not signed by the ${parentRole} ${parent.subjectCn} (fingerprint ${parent.fingerprint})`, {
      certificate: role,
      signer: parentRole,
      signerFingerprint: parent.fingerprint,
    });
  }
}

/** The product line of an ARK (by subject CN ARK-Milan / ARK-Genoa / ARK-Turin), undefined for any other certificate. */
export function lineOfArk(ark: AmdCertificate): AmdProductLine | undefined {
  return AMD_PRODUCT_LINES.find((l) => ark.subjectCn === amdNames(l).ark);
}

function namesOfArk(ark: AmdCertificate): AmdNames {
  const line = lineOfArk(ark);
  if (!line) {
    throw chainInvalid(`ARK ${JSON.stringify(ark.subjectCn)} is not the root of a supported product line (ARK-Milan, ARK-Genoa, ARK-Turin)`, {
      certificate: 'ARK',
      actual: { subject: ark.subjectCn, issuer: ark.issuerCn },
    });
  }
  return amdNames(line);
}

/** Checks the ARK alone: the root of a supported line, self-signed with RSASSA-PSS/SHA-384, valid at `at`. */
export function verifyArk(memo: SignatureMemo, ark: AmdCertificate, at: Date): void {
  const names = namesOfArk(ark);
  requireNames(ark, 'ARK', names.ark, names.ark);
  requirePss384(ark, 'ARK');
  requireSignedBy(memo, ark, 'ARK', ark, 'ARK');
  requireValidAt(ark, 'ARK', at);
}

/** Checks an ASK (VCEK signer) or ASVK (VLEK signer) of the ARK's line against the configured ARK at `at`. */
export function verifyAsk(memo: SignatureMemo, ask: AmdCertificate, kind: 'vcek' | 'vlek', ark: AmdCertificate, at: Date): void {
  const names = namesOfArk(ark);
  const role = kind === 'vcek' ? 'ASK' : 'ASVK';
  requireNames(ask, role, kind === 'vcek' ? names.ask : names.asvk, names.ark);
  requirePss384(ask, role);
  requireSignedBy(memo, ask, role, ark, 'configured ARK');
  requireValidAt(ask, role, at);
}

/** The whole chain for one signer at `at` (the ARK is the configured trust anchor). */
export function verifySignerChain(memo: SignatureMemo, signer: SignerCertificate, ask: AmdCertificate, ark: AmdCertificate, at: Date): void {
  verifyArk(memo, ark, at);
  verifyAsk(memo, ask, signer.kind, ark, at);
  const role = signer.kind.toUpperCase();
  requirePss384(signer, role);
  requireSignedBy(memo, signer, role, ask, signer.kind === 'vcek' ? 'ASK' : 'ASVK');
  requireValidAt(signer, role, at);
}
