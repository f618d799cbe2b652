/**
 * Verification of SEV-SNP evidence, shared by the three SNP variants. Fixed stages in a fixed
 * order, each a small method:
 *
 *   parse -> product line -> signer certificate -> ASK/ASVK -> chain to the configured ARK at
 *   the verification time -> certificate vs report (HWID, TCB) -> binding (REPORT_DATA) ->
 *   guest policy, VMPL, TCB rules -> report signature -> early warnings
 *
 * What the report claims is judged before its signature, so every kind of bad evidence gets its
 * own reason code (a tampered VMPL is VMPL_MISMATCH, not a generic signature failure); evidence
 * is accepted only when every stage passed, the signature included.
 */
import { createHash } from 'node:crypto';
import { collateralLookup } from '../collateral/as-attestation-error.js';
import { AttestationError } from '../errors.js';
import type { AttestationLogger } from '../interfaces.js';
import { verifySignerChain, type SignatureMemo } from './chain.js';
import { parseAmdChain, parseSignerCertificate, type AmdCertificate, type SignerCertificate } from './certs.js';
import { checkReportAgainstSigner, checkReportClaims, type SnpReportPolicy } from './checks.js';
import { chainKey, vcekKey, type SnpCollateralViews } from './collateral.js';
import { requireSupportedProduct, type SnpProductLine } from './product.js';
import { parseReport, type SnpReport } from './report.js';
import { verifyReportSignature } from './signature.js';
import { effectiveMinimumTcb, refusalRisks, type SnpWarningOptions } from './warnings.js';

/** The SNP parts of a document (instance info fields). */
export interface SnpEvidence {
  readonly report: Uint8Array;
  /** PEM of the VCEK/VLEK as the issuer sent it; empty = not sent. */
  readonly reportSigner: Uint8Array;
  /** PEM ASK/ASVK (and maybe ARK) as the issuer sent it; empty = not sent. */
  readonly certChain: Uint8Array;
}

/** A report that passed every stage, with the certificates it was verified with. */
export interface VerifiedSnpReport {
  readonly report: SnpReport;
  readonly productLine: SnpProductLine;
  readonly signer: SignerCertificate;
  readonly ask: AmdCertificate;
  readonly ark: AmdCertificate;
  readonly verifiedAt: Date;
}

/** Binds the report to the variant's data: throws REPORT_DATA_MISMATCH (see checkReportData). */
export type ReportBinding = (report: SnpReport) => void;

/** Everything one verifier needs; built once per validator configuration. */
export interface SnpVerifierOptions {
  /** The configured trust anchor. */
  readonly ark: AmdCertificate;
  readonly collateral: SnpCollateralViews;
  readonly policy: SnpReportPolicy;
  readonly memo: SignatureMemo;
  /** Verification time (tests pin it). */
  readonly now: () => Date;
  readonly logger: AttestationLogger;
  readonly warnings?: SnpWarningOptions;
}

/** Parsed certificates by content hash, so a warm validation does not parse them again. */
class ParsedMemo<T> {
  readonly #items = new Map<string, T>();
  constructor(private readonly max = 512) {}
  get(bytes: Uint8Array, parse: () => T): T {
    const id = createHash('sha256').update(bytes).digest('hex');
    const hit = this.#items.get(id);
    if (hit !== undefined) return hit;
    const value = parse();
    if (this.#items.size >= this.max) this.#items.delete(this.#items.keys().next().value!);
    this.#items.set(id, value);
    return value;
  }
}

/** Verifies SNP evidence against one configuration. */
export class SnpVerifier {
  readonly #signers = new ParsedMemo<SignerCertificate>();
  readonly #chains = new ParsedMemo<AmdCertificate | undefined>();
  readonly #remembered = new Set<string>();

  constructor(private readonly options: SnpVerifierOptions) {}

  /** Runs every stage; returns the verified report or throws an AttestationError naming the check. */
  async verify(evidence: SnpEvidence, binding: ReportBinding, signal?: AbortSignal): Promise<VerifiedSnpReport> {
    const report = parseReport(evidence.report);
    const productLine = requireSupportedProduct(report);
    const at = this.options.now();
    const signer = await this.signer(report, evidence, signal);
    const ask = await this.ask(signer.kind, evidence, signal);
    verifySignerChain(this.options.memo, signer, ask, this.options.ark, at);
    checkReportAgainstSigner(report, signer);
    binding(report);
    checkReportClaims(report, this.policyAt(at));
    verifyReportSignature(report, signer.publicKey, signer.kind.toUpperCase());
    const verified = { report, productLine, signer, ask, ark: this.options.ark, verifiedAt: at };
    this.remember(report, signer, evidence);
    this.warn(verified);
    return verified;
  }

  /** The policy in force at `at` (an upcoming minimum TCB joins once effective). */
  private policyAt(at: Date): SnpReportPolicy {
    const upcoming = this.options.warnings?.upcomingMinimumTcb;
    if (!upcoming) return this.options.policy;
    return { ...this.options.policy, minimumTcb: effectiveMinimumTcb(this.options.policy.minimumTcb, upcoming, at) };
  }

  /** The signing certificate: VLEK from the document (required); VCEK from the document, else the collateral cache / KDS. */
  private async signer(report: SnpReport, evidence: SnpEvidence, signal?: AbortSignal): Promise<SignerCertificate> {
    if (report.signingKey === 'none') {
      throw new AttestationError('REPORT_SIGNATURE_INVALID', 'SNP report is not signed (signing key "none")', { details: { field: 'signingKey', actual: 'none' } });
    }
    const kind = report.signingKey;
    const sent = Buffer.from(evidence.reportSigner).toString('utf8').trim();
    if (kind === 'vlek') {
      if (sent === '') throw new AttestationError('DOCUMENT_MALFORMED', 'VLEK certificate required but not present (instance info ReportSigner is empty)', { details: { field: 'ReportSigner' } });
      return this.#signers.get(evidence.reportSigner, () => parseSignerCertificate(sent, 'vlek'));
    }
    if (sent !== '') {
      try {
        return this.#signers.get(evidence.reportSigner, () => parseSignerCertificate(sent, 'vcek'));
      } catch (err) {
        this.options.logger.warn('ignoring malformed VCEK sent with the report, using the collateral cache', { error: (err as Error).message });
      }
    }
    return this.collateral(() => this.options.collateral.vcek.get(vcekKey(report.chipId, report.reportedTcb), signal));
  }

  /** ASK/ASVK: from the document's chain if it has one, else configured / cached / KDS. */
  private async ask(kind: 'vcek' | 'vlek', evidence: SnpEvidence, signal?: AbortSignal): Promise<AmdCertificate> {
    if (evidence.certChain.length > 0 && Buffer.from(evidence.certChain).toString('utf8').trim() !== '') {
      const sent = this.#chains.get(evidence.certChain, () => parseAmdChain(Buffer.from(evidence.certChain).toString('utf8'), 'CertChain').ask);
      if (sent) return sent;
    }
    return this.collateral(() => this.options.collateral.ask(kind, signal));
  }

  /** Collateral lookups: cache errors keep their codes as attestation codes. */
  private collateral<T>(lookup: () => Promise<T>): Promise<T> {
    return collateralLookup(lookup);
  }

  /**
   * A VCEK that came with the evidence is kept (with the ASK chain that came along, which its
   * verification needs when no ASK is configured), so later evidence without it verifies offline.
   * Each key is tried once per verifier: a warm validation does not re-verify it.
   */
  private remember(report: SnpReport, signer: SignerCertificate, evidence: SnpEvidence): void {
    if (signer.kind !== 'vcek' || evidence.reportSigner.length === 0 || report.maskChipKey || report.chipId.every((b) => b === 0)) return;
    const key = vcekKey(report.chipId, report.reportedTcb);
    const { vcek, chain } = this.options.collateral;
    if (this.#remembered.has(key) || vcek.cache.entry(key)) return;
    if (this.#remembered.size >= 512) this.#remembered.clear();
    this.#remembered.add(key);
    const sentChain = Buffer.from(evidence.certChain);
    const provideChain = async () => {
      if (sentChain.toString('utf8').trim() !== '' && !chain.cache.entry(chainKey('vcek'))) await chain.provide(chainKey('vcek'), sentChain);
    };
    provideChain()
      .then(() => vcek.provide(key, signer.der))
      .catch((err: unknown) => this.options.logger.info('not caching the VCEK sent with the report', { error: (err as Error)?.message }));
  }

  private warn(v: VerifiedSnpReport): void {
    const w = this.options.warnings;
    if (!w) return;
    for (const risk of refusalRisks(v, v.verifiedAt, w)) {
      try {
        w.sink(risk);
      } catch {
        // A broken sink must not refuse a node.
      }
    }
  }
}
