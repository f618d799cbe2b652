/**
 * End-to-end DCAP verification of a TDX quote against its collateral at an explicit time
 * (docs/protocol/tdx-dcap.md). Stages run in a fixed order; each is a small method, each failure
 * a typed AttestationError with its own code naming the field and values.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { INTEL_SGX_ROOT_CA_PEM } from '../config/roots.js';
import { AttestationError } from '../errors.js';
import { parseQeIdentity, parseTcbInfo, type DcapCollateral, type QeIdentity, type Signed, type TcbStatus, type TdxTcbInfo } from './collateral.js';
import { readPckTcb, parsePemChain, type PckTcb } from './pck.js';
import { checkChainValidity, checkCrlListing, cn, p256KeyFromRaw, verifyChain, verifyP256Raw } from './pki.js';
import { VerificationMemo } from './verification-memo.js';
import { parseTdxQuote, type TdxQuote } from './quote.js';
import { applyStatusPolicy, evaluateTcb, type TcbEvaluation, type TcbVerdictStatus } from './tcb.js';

/** TCB statuses accepted unless configured otherwise: current, or fixable by configuration/software hardening. */
export const DEFAULT_ACCEPTED_TCB_STATUSES: readonly TcbStatus[] = ['UpToDate', 'SWHardeningNeeded', 'ConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded'];

/** Options of a DcapVerifier. */
export interface DcapVerifierOptions {
  /** Trust anchor (DER or PEM); defaults to the embedded Intel SGX Root CA. */
  trustedRoot?: Buffer | string;
  /** TCB statuses that pass; default DEFAULT_ACCEPTED_TCB_STATUSES. */
  acceptedStatuses?: readonly TcbVerdictStatus[];
}

/** What a verified quote proves. */
export interface DcapVerification {
  quote: TdxQuote;
  tcb: TcbEvaluation;
  fmspc: string;
  /** Subject CN of the CA that issued the PCK certificate (Platform or Processor CA). */
  pckIssuer: string;
}

/**
 * A signed collateral document: issuer chain to `root` and ECDSA signature over its raw member at
 * `at`; with `checkWindow` (default) also issueDate <= at <= nextUpdate (COLLATERAL_EXPIRED).
 */
export function verifySignedCollateral<T extends TdxTcbInfo | QeIdentity>(doc: Signed<T>, issuerChainPem: string, root: X509Certificate, at: Date, what: string, checkWindow = true): T {
  const chain = parsePemChain(issuerChainPem, `${what} issuer chain`);
  verifyChain(chain, root, at, `${what} issuer chain`);
  if (!verifyP256Raw(chain[0]!.publicKey, Buffer.from(doc.signedText, 'utf8'), doc.signature)) {
    throw new AttestationError('COLLATERAL_SIGNATURE_INVALID', `${what}: signature does not verify with ${cn(chain[0]!)}`, { details: { collateral: what } });
  }
  if (checkWindow) checkCollateralWindow(doc.value, at, what);
  return doc.value;
}

/** issueDate <= at <= nextUpdate, else COLLATERAL_EXPIRED naming the window. */
function checkCollateralWindow({ issueDate, nextUpdate }: { issueDate: Date; nextUpdate: Date }, at: Date, what: string): void {
  if (at < issueDate || at > nextUpdate) {
    throw new AttestationError('COLLATERAL_EXPIRED', `${what}: not current at ${at.toISOString()} (issued ${issueDate.toISOString()}, next update ${nextUpdate.toISOString()})`, {
      details: { collateral: what, issueDate: issueDate.toISOString(), nextUpdate: nextUpdate.toISOString(), at: at.toISOString() },
    });
  }
}

/** The verified pieces of a quote and its collateral, before the TCB evaluation. */
export interface AuthenticatedQuote {
  quote: TdxQuote;
  pckTcb: PckTcb;
  tcbInfo: TdxTcbInfo;
  qeIdentity: QeIdentity;
  pckIssuer: string;
}

/** Verifies TDX quotes (v4, and v5 with a TD 1.0 or TD 1.5 body) with DCAP collateral. */
export class DcapVerifier {
  readonly #root: X509Certificate;
  readonly #accepted: ReadonlySet<TcbVerdictStatus>;
  readonly #memo: VerificationMemo;

  constructor(options: DcapVerifierOptions = {}) {
    this.#root = new X509Certificate(options.trustedRoot ?? INTEL_SGX_ROOT_CA_PEM);
    this.#accepted = new Set(options.acceptedStatuses ?? DEFAULT_ACCEPTED_TCB_STATUSES);
    this.#memo = new VerificationMemo(this.#root);
  }

  /**
   * Verifies `quote` (bytes or parsed) against `collateral` at time `at`: authenticity, then the
   * TCB evaluation and the status policy.
   */
  verify(quote: Uint8Array | TdxQuote, collateral: DcapCollateral, at: Date): DcapVerification {
    const a = this.authenticate(quote, collateral, at);
    const tcb = evaluateTcb(a.tcbInfo, a.qeIdentity, a.pckTcb, a.quote.body, a.quote.qeReport);
    applyStatusPolicy(tcb, this.#accepted);
    return { quote: a.quote, tcb, fmspc: a.pckTcb.fmspc.toString('hex'), pckIssuer: a.pckIssuer };
  }

  /**
   * The cryptographic half of verification: the quote was produced by a genuine, unrevoked Intel
   * platform's quoting enclave, and the collateral is Intel-signed, current and for this platform.
   * Returns the verified pieces the TCB evaluation works on.
   */
  authenticate(quote: Uint8Array | TdxQuote, collateral: DcapCollateral, at: Date): AuthenticatedQuote {
    const q = quote instanceof Uint8Array ? parseTdxQuote(quote) : quote;
    const { pck, pckTcb, issuer } = this.#verifyPckChain(q, at);
    this.#checkRevocations(collateral, pck, issuer, at);
    const tcbInfo = this.#signedCollateral(collateral.tcbInfo, collateral.tcbInfoIssuerChain, at, 'TCB info', parseTcbInfo);
    const qeIdentity = this.#signedCollateral(collateral.qeIdentity, collateral.qeIdentityIssuerChain, at, 'QE identity', parseQeIdentity);
    this.#matchPlatform(tcbInfo, pckTcb);
    this.#verifyQeReport(q, pck);
    this.#verifyQuoteSignature(q);
    return { quote: q, pckTcb, tcbInfo, qeIdentity, pckIssuer: cn(issuer) };
  }

  /** The PCK chain in the quote leads to the trusted root and is valid at `at`. */
  #verifyPckChain(q: TdxQuote, at: Date): { pck: X509Certificate; pckTcb: PckTcb; issuer: X509Certificate } {
    const chain = this.#memo.chain(q.pckChainPem, 'PCK certificate chain');
    checkChainValidity(chain, this.#root, at, 'PCK certificate chain');
    const pck = chain[0]!;
    return { pck, pckTcb: readPckTcb(pck), issuer: chain[1] ?? this.#root };
  }

  /** Neither the PCK (by its CA's CRL) nor its CA (by the root CRL) is revoked. */
  #checkRevocations(c: DcapCollateral, pck: X509Certificate, issuer: X509Certificate, at: Date): void {
    checkCrlListing(this.#memo.crl(c.rootCrl, this.#root, 'root CA CRL'), [issuer], at, 'root CA CRL');
    checkCrlListing(this.#memo.crl(c.pckCrl, issuer, 'PCK CRL'), [pck], at, 'PCK CRL');
  }

  /** A signed collateral document: signature once per content (memo), chain and own validity at `at`. */
  #signedCollateral<T extends TdxTcbInfo | QeIdentity>(body: string, chainPem: string, at: Date, what: string, parse: (body: string) => Signed<T>): T {
    const { value, chain } = this.#memo.signed(body, chainPem, what, parse);
    checkChainValidity(chain, this.#root, at, `${what} issuer chain`);
    checkCollateralWindow(value, at, what);
    return value;
  }

  /** The TCB info is the one for this platform (FMSPC and PCE ID of the PCK certificate). */
  #matchPlatform(tcbInfo: TdxTcbInfo, pck: PckTcb): void {
    for (const [field, expected, actual] of [
      ['FMSPC', tcbInfo.fmspc, pck.fmspc],
      ['PCE ID', tcbInfo.pceId, pck.pceId],
    ] as const) {
      if (!expected.equals(actual)) {
        throw new AttestationError('COLLATERAL_MISMATCH', `TCB info ${field} ${expected.toString('hex')} is not the PCK certificate's ${actual.toString('hex')}`, {
          details: { field, expected: expected.toString('hex'), actual: actual.toString('hex') },
        });
      }
    }
  }

  /** The PCK key signed the QE report, and the QE report binds the attestation key. */
  #verifyQeReport(q: TdxQuote, pck: X509Certificate): void {
    if (!verifyP256Raw(pck.publicKey, q.qeReport.raw, q.qeReportSignature)) {
      throw new AttestationError('QE_REPORT_SIGNATURE_INVALID', 'the QE report is not signed by the PCK certificate key', { details: { check: 'qe-report-signature' } });
    }
    const expected = Buffer.concat([createHash('sha256').update(q.attestationKey).update(q.qeAuthData).digest(), Buffer.alloc(32)]);
    if (!expected.equals(q.qeReport.reportData)) {
      throw new AttestationError('QE_REPORT_DATA_MISMATCH', 'QE report data is not SHA-256(attestation key || QE auth data) padded with zeros', {
        details: { expected: expected.toString('hex'), actual: q.qeReport.reportData.toString('hex') },
      });
    }
  }

  /** The attestation key signed the quote header and TD report body. */
  #verifyQuoteSignature(q: TdxQuote): void {
    if (!verifyP256Raw(p256KeyFromRaw(q.attestationKey), q.signedBytes, q.signature)) {
      throw new AttestationError('QUOTE_SIGNATURE_INVALID', 'the TDX quote signature does not verify with its attestation key', { details: { check: 'quote-signature' } });
    }
  }
}
