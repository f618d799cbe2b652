import { verify as verifySignature, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { publicKeyFromSpki } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import { KubeletCertificateAuthority, KubeletCertificateError } from '@asterism/k8s';
import type { KubeletCertSigner, ParsedKubeletCsr } from '../ticket/ports.js';
import { parseCsrDer, type CsrFields } from './csr-der.js';

/** Why a kubelet CSR or the CA files were refused. */
export class KubeletCaError extends AsterismError<'CSR_INVALID' | 'CA_INVALID'> {}

const NODE_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
const OID_CN = '2.5.4.3';
const OID_O = '2.5.4.10';

/** Signature algorithms we accept on CSRs, with the hash node:crypto needs. */
const SIGNATURE_HASH: Record<string, string | null> = {
  '1.2.840.10045.4.3.2': 'sha256', // ecdsa-with-SHA256
  '1.2.840.10045.4.3.3': 'sha384', // ecdsa-with-SHA384
  '1.2.840.10045.4.3.4': 'sha512', // ecdsa-with-SHA512
  '1.2.840.113549.1.1.11': 'sha256', // sha256WithRSAEncryption
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.3.101.112': null, // Ed25519
};

/** A parsed, signature-checked kubelet CSR. */
export type KubeletCsr = ParsedKubeletCsr;

function attributeValues(subject: CsrFields['subject'], oid: string): string[] {
  return subject.filter((a) => a.oid === oid).map((a) => a.value);
}

/**
 * Parses a DER CSR and applies the reference's checks (docs/protocol/join-ticket.md): valid self-signature,
 * exactly one Organization `system:nodes`, CN `system:node:<name>` with a non-empty name.
 * Synchronous (node:crypto), so it can run in request validation before any key is fetched. The
 * DER is read in place (csr-der.ts): the signature is checked over the bytes as received, and the
 * subject and key are handed on without re-encoding.
 */
export function parseKubeletCsr(der: Uint8Array): KubeletCsr {
  let csr: CsrFields;
  try {
    csr = parseCsrDer(Buffer.from(der));
  } catch (err) {
    throw new KubeletCaError('CSR_INVALID', `not a DER PKCS#10 certificate request: ${(err as Error).message}`);
  }
  let publicKey: KeyObject;
  try {
    publicKey = publicKeyFromSpki(csr.spkiRaw);
  } catch (err) {
    throw new KubeletCaError('CSR_INVALID', `unsupported public key: ${(err as Error).message}`);
  }
  const algOid = csr.signatureAlgorithm;
  if (!(algOid in SIGNATURE_HASH)) throw new KubeletCaError('CSR_INVALID', `unsupported signature algorithm ${algOid}`);
  let ok = false;
  try {
    ok = verifySignature(SIGNATURE_HASH[algOid] ?? null, csr.infoRaw, publicKey, csr.signature);
  } catch {
    ok = false;
  }
  if (!ok) throw new KubeletCaError('CSR_INVALID', 'CSR signature does not verify with its public key');
  const orgs = attributeValues(csr.subject, OID_O);
  if (orgs.length !== 1 || orgs[0] !== NODES_GROUP) throw new KubeletCaError('CSR_INVALID', `CSR organization must be exactly ["${NODES_GROUP}"], got ${JSON.stringify(orgs)}`);
  const cns = attributeValues(csr.subject, OID_CN);
  const cn = cns[0] ?? '';
  if (cns.length !== 1 || !cn.startsWith(NODE_PREFIX) || cn.length === NODE_PREFIX.length) {
    throw new KubeletCaError('CSR_INVALID', `CSR common name must be "${NODE_PREFIX}<node name>", got ${JSON.stringify(cn.slice(0, 80))}`);
  }
  const subjectDer = new Uint8Array(csr.subjectRaw).buffer;
  return { nodeName: cn.slice(NODE_PREFIX.length), subjectDer, publicKey, spkiDer: csr.spkiRaw, ips: csr.ips };
}

/**
 * The kubelet CA of the joinservice (docs/protocol/join-ticket.md): the cluster CA from `<pki>/ca.crt` and
 * `<pki>/ca.key` signs client+server certificates for validated kubelet CSRs. The certificate
 * template has one home, `KubeletCertificateAuthority` of libs/k8s, which the first control plane
 * uses for its own kubelet too; this class adds the CSR checks.
 */
export class KubeletCa implements KubeletCertSigner {
  private constructor(private readonly authority: KubeletCertificateAuthority) {}

  /** Loads `ca.crt` (first PEM block) and `ca.key` (SEC1, PKCS#1 or PKCS#8) from `pkiDir`. */
  static async load(pkiDir: string, now: () => Date = () => new Date()): Promise<KubeletCa> {
    const certPem = await readFile(join(pkiDir, 'ca.crt'), 'utf8');
    const keyPem = await readFile(join(pkiDir, 'ca.key'), 'utf8');
    return KubeletCa.fromPem(certPem, keyPem, now);
  }

  static async fromPem(certPem: string, keyPem: string, now: () => Date = () => new Date()): Promise<KubeletCa> {
    try {
      return new KubeletCa(await KubeletCertificateAuthority.fromPem(certPem, keyPem, now));
    } catch (err) {
      if (err instanceof KubeletCertificateError) throw new KubeletCaError('CA_INVALID', err.message, { cause: err });
      throw err;
    }
  }

  /** Signs a CSR parsed once at request parsing ({@link parseKubeletCsr}): no second parse. */
  async sign(csr: KubeletCsr): Promise<Buffer> {
    try {
      return await this.authority.issue(csr);
    } catch (err) {
      if (err instanceof KubeletCertificateError) throw new KubeletCaError('CSR_INVALID', err.message, { cause: err });
      throw err;
    }
  }
}
