/**
 * Verification of SEV-SNP evidence, shared by the three SNP variants. Fixed stages in a fixed
 * order, each a small method:
 *
 *   parse -> product line (and its trust anchor) -> signer certificate -> ASK/ASVK -> chain to
 *   the line's ARK at the verification time -> certificate vs report (HWID, TCB) -> binding
 *   (REPORT_DATA) -> report version, mitigations, guest policy, VMPL, TCB rules -> report
 *   signature -> early warnings
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
import type { AmdProductLine } from './lines.js';
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

/** The trust anchor of one product line and the collateral verified against it. */
export interface SnpAnchor {
  readonly ark: AmdCertificate;
  readonly collateral: SnpCollateralViews;
}

/** Everything one verifier needs; built once per validator configuration. */
export interface SnpVerifierOptions {
  /** The configured trust anchor (the ARK of one product line). */
  readonly ark: AmdCertificate;
  readonly collateral: SnpCollateralViews;
  /** Trust anchors of the other product lines (docs/adr/0010); none = only the line of `ark`. */
  readonly otherLines?: readonly SnpAnchor[];
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
    const anchor = this.anchorFor(productLine);
    const at = this.options.now();
    const signer = await this.signer(report, productLine, anchor, evidence, signal);
    const ask = await this.ask(signer.kind, anchor, evidence, signal);
    verifySignerChain(this.options.memo, signer, ask, anchor.ark, at);
    checkReportAgainstSigner(report, signer);
    binding(report);
    checkReportClaims(report, this.policyAt(at));
    verifyReportSignature(report, signer.publicKey, signer.kind.toUpperCase());
    const verified = { report, productLine, signer, ask, ark: anchor.ark, verifiedAt: at };
    this.remember(report, productLine, anchor, signer, evidence);
    this.warn(verified);
    return verified;
  }

  /** The anchor of the report's line: PRODUCT_UNSUPPORTED when this configuration has no ARK for it. */
  private anchorFor(line: AmdProductLine): SnpAnchor {
    const anchors: SnpAnchor[] = [{ ark: this.options.ark, collateral: this.options.collateral }, ...(this.options.otherLines ?? [])];
    const anchor = anchors.find((a) => a.collateral.line === line);
    if (anchor) return anchor;
    const have = anchors.map((a) => a.collateral.line);
    throw new AttestationError('PRODUCT_UNSUPPORTED', `SNP report comes from an AMD ${line} processor but no ARK-${line} is configured (configured: ${have.join(', ')})`, {
      details: { field: 'cpuid', expected: have, actual: line },
    });
  }

  /** The policy in force at `at` (an upcoming minimum TCB joins once effective). */
  private policyAt(at: Date): SnpReportPolicy {
    const upcoming = this.options.warnings?.upcomingMinimumTcb;
    if (!upcoming) return this.options.policy;
    return { ...this.options.policy, minimumTcb: effectiveMinimumTcb(this.options.policy.minimumTcb, upcoming, at) };
  }

  /** The signing certificate: VLEK from the document (required); VCEK from the document, else the collateral cache / KDS. */
  private async signer(report: SnpReport, line: AmdProductLine, anchor: SnpAnchor, evidence: SnpEvidence, signal?: AbortSignal): Promise<SignerCertificate> {
    if (report.signingKey === 'none') {
      throw new AttestationError('REPORT_SIGNATURE_INVALID', 'SNP report is not signed (signing key "none")', { details: { field: 'signingKey', actual: 'none' } });
    }
    const kind = report.signingKey;
    const sent = Buffer.from(evidence.reportSigner).toString('utf8').trim();
    if (kind === 'vlek') {
      if (sent === '') throw new AttestationError('DOCUMENT_MALFORMED', 'VLEK certificate required but not present (instance info ReportSigner is empty)', { details: { field: 'ReportSigner' } });
      return this.#signers.get(evidence.reportSigner, () => parseSignerCertificate(sent, 'vlek', line));
    }
    if (sent !== '') {
      try {
        return this.#signers.get(evidence.reportSigner, () => parseSignerCertificate(sent, 'vcek', line));
      } catch (err) {
        this.options.logger.warn('ignoring malformed VCEK sent with the report, using the collateral cache', { error: (err as Error).message });
      }
    }
    return this.collateral(() => anchor.collateral.vcek.get(vcekKey(report.chipId, report.reportedTcb, line), signal));
  }

  /** ASK/ASVK: from the document's chain if it has one, else configured / cached / KDS. */
  private async ask(kind: 'vcek' | 'vlek', anchor: SnpAnchor, evidence: SnpEvidence, signal?: AbortSignal): Promise<AmdCertificate> {
    if (evidence.certChain.length > 0 && Buffer.from(evidence.certChain).toString('utf8').trim() !== '') {
      const sent = this.#chains.get(evidence.certChain, () => parseAmdChain(Buffer.from(evidence.certChain).toString('utf8'), 'CertChain').ask);
      if (sent) return sent;
    }
    return this.collateral(() => anchor.collateral.ask(kind, signal));
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
  private remember(report: SnpReport, line: AmdProductLine, anchor: SnpAnchor, signer: SignerCertificate, evidence: SnpEvidence): void {
    if (signer.kind !== 'vcek' || evidence.reportSigner.length === 0 || report.maskChipKey || report.chipId.every((b) => b === 0)) return;
    const key = vcekKey(report.chipId, report.reportedTcb, line);
    const { vcek, chain } = anchor.collateral;
    if (this.#remembered.has(key) || vcek.cache.entry(key)) return;
    if (this.#remembered.size >= 512) this.#remembered.clear();
    this.#remembered.add(key);
    const sentChain = Buffer.from(evidence.certChain);
    const provideChain = async () => {
      if (sentChain.toString('utf8').trim() !== '' && !chain.cache.entry(chainKey('vcek', line))) await chain.provide(chainKey('vcek', line), sentChain);
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
