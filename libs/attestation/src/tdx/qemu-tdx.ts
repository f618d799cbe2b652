/**
 * The `qemu-tdx` variant (no TPM): the issuer asks the TDX module for a quote whose REPORT_DATA
 * is SHA256(userData || nonce) zero-padded to 64 bytes; the validator verifies the quote with
 * DCAP collateral, checks that binding and compares MRTD + RTMR0..3 (indices 0..4) with the
 * config's measurements (docs/protocol/tdx-dcap.md).
 */
import { registerValidator } from '../choose.js';
import { ConfigfsTsm, CONFIGFS_TSM_REPORT_DIR, NODE_TSM_FS, type ConfigfsTsmOptions, type TsmFileSystem } from '../tsm/configfs-tsm.js';
import { collateralLookup } from '../collateral/as-attestation-error.js';
import { AttestationError } from '../errors.js';
import { compareExtraData, makeExtraData } from '../extra-data.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger, type Issuer, type Validator } from '../interfaces.js';
import type { Measurement } from '../measurements/measurement.js';
import { enforceMeasurements } from '../measurements/compare.js';
import { Variant } from '../variant.js';
import type { DcapCollateral } from './collateral.js';
import { decodeTdxDocument, encodeTdxDocument, tdMeasurements } from './document.js';
import { parsePemChain, readPckTcb } from './pck.js';
import type { TdxCollateralSource, TdxPlatform } from './pcs-collateral.js';
import { cn } from './pki.js';
import { checkMrServiceTd } from './service-td.js';
import { parseTdxQuote, type TdxQuote } from './quote.js';
import type { TdxStatusPolicy } from './status-policy.js';
import { DcapVerifier, type DcapVerification } from './verifier.js';

/** Produces a TDX quote over 64 bytes of report data (configfs-tsm in a TD). */
export interface TdxQuoteProvider {
  getQuote(reportData: Buffer, signal?: AbortSignal): Promise<Buffer>;
}

/** Verifies a quote with collateral at a time (DcapVerifier, or a stand-in in unit tests). */
export interface TdxQuoteVerifier {
  verify(quote: TdxQuote, collateral: DcapCollateral, at: Date): DcapVerification;
}

/**
 * Quotes through configfs-tsm (the `tdx_guest` provider of ../tsm/configfs-tsm.ts): report data
 * padded to 64 bytes in, the quote from outblob.
 */
export class ConfigfsTsmQuoteProvider implements TdxQuoteProvider {
  readonly #tsm: ConfigfsTsm;

  constructor(root: string = CONFIGFS_TSM_REPORT_DIR, fs: TsmFileSystem = NODE_TSM_FS, options: Pick<ConfigfsTsmOptions, 'devicePath'> = {}) {
    this.#tsm = new ConfigfsTsm('tdx_guest', { root, fs, ...options });
  }

  async getQuote(reportData: Buffer, signal?: AbortSignal): Promise<Buffer> {
    if (reportData.length > 64) throw new AttestationError('ISSUER_FAILED', `report data is ${reportData.length} bytes, at most 64`, { details: { step: 'configfs-tsm report', provider: 'tdx_guest', tsm: 'request-invalid' } });
    return (await this.#tsm.report(Buffer.concat([reportData, Buffer.alloc(64 - reportData.length)]), undefined, signal)).outblob;
  }
}

/** qemu-tdx issuer. */
export class QemuTdxIssuer implements Issuer {
  readonly variant = Variant.fromString('qemu-tdx');

  constructor(private readonly quotes: TdxQuoteProvider) {}

  async issue(userData: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    const reportData = Buffer.alloc(64);
    makeExtraData(userData, nonce).copy(reportData);
    let rawQuote: Buffer;
    try {
      rawQuote = await this.quotes.getQuote(reportData, signal);
    } catch (err) {
      throw new AttestationError('ISSUER_FAILED', `generating TDX quote: ${(err as Error).message}`, { details: { step: 'generating quote' }, cause: err });
    }
    return encodeTdxDocument({ rawQuote, userData: Buffer.from(userData) });
  }
}

/** Options of {@link QemuTdxValidator}. */
export interface QemuTdxValidatorOptions extends TdxStatusPolicy {
  measurements: ReadonlyMap<number, Measurement>;
  /** The MRSERVICETD a TD 1.5 quote must carry (attestation config `mrServiceTd`); unset = not checked. */
  mrServiceTd?: Buffer;
  collateral: TdxCollateralSource;
  /** Default: a DcapVerifier with the embedded Intel root and `acceptedTcbStatuses`. */
  verifier?: TdxQuoteVerifier;
  /** Verification time (default: now). */
  clock?: () => Date;
  logger?: AttestationLogger;
}

/** qemu-tdx validator. */
export class QemuTdxValidator implements Validator {
  readonly variant = Variant.fromString('qemu-tdx');
  readonly #verifier: TdxQuoteVerifier;

  constructor(private readonly options: QemuTdxValidatorOptions) {
    this.#verifier = options.verifier ?? new DcapVerifier(options.acceptedTcbStatuses ? { acceptedStatuses: options.acceptedTcbStatuses } : {});
  }

  /**
   * Binding first, then DCAP, then measurements. REPORT_DATA must carry SHA256(userData || nonce)
   * (it binds the peer's key and our nonce). Checking it before the quote signature is safe (every
   * check must pass; the order only picks the reported reason) and cheaper: a replayed or
   * REPORT_DATA-tampered quote is refused as NONCE_MISMATCH without any collateral lookup, where
   * DCAP alone could only say QUOTE_SIGNATURE_INVALID (docs/adr/0012-tdx-dcap-verifier.md).
   */
  async validate(document: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    const doc = decodeTdxDocument(document);
    const quote = parseTdxQuote(doc.rawQuote);
    if (!compareExtraData(quote.body.reportData, makeExtraData(doc.userData, nonce))) {
      throw new AttestationError('NONCE_MISMATCH', 'TDX quote REPORT_DATA does not bind this nonce and user data', { details: { check: 'report-data' } });
    }
    const collateral = await collateralLookup(() => this.options.collateral.collateral(platformOf(quote), signal));
    this.#verifier.verify(quote, collateral, (this.options.clock ?? (() => new Date()))());
    checkMrServiceTd(quote.body, this.options.mrServiceTd);
    enforceMeasurements(this.options.measurements, tdMeasurements(quote.body), this.options.logger ?? NOP_ATTESTATION_LOGGER);
    return doc.userData;
  }
}

/** FMSPC and issuing CA of a quote's PCK certificate: which collateral to fetch. */
export function platformOf(quote: TdxQuote): TdxPlatform {
  const [pck, issuer] = parsePemChain(quote.pckChainPem, 'PCK certificate chain');
  const name = issuer ? cn(issuer) : '';
  const ca = /processor/i.test(name) ? 'processor' : /platform/i.test(name) ? 'platform' : undefined;
  if (!ca) throw new AttestationError('CERT_CHAIN_INVALID', `PCK issuer "${name}" is neither the Platform nor the Processor CA`, { details: { issuer: name } });
  return { fmspc: readPckTcb(pck!).fmspc.toString('hex'), ca };
}

/**
 * Registers the qemu-tdx validator with the collateral source of this process (the joinservice's
 * ConfigMap-backed cache) and the operator's TCB status policy, so `validatorFor(config)` can
 * build it.
 */
export function registerQemuTdxValidator(collateral: TdxCollateralSource, policy: TdxStatusPolicy = {}): void {
  registerValidator('qemu-tdx', (config, logger) => {
    const mrServiceTd = 'mrServiceTd' in config ? config.mrServiceTd : undefined;
    return new QemuTdxValidator({ measurements: config.measurements, collateral, logger, ...(mrServiceTd ? { mrServiceTd } : {}), ...policy });
  });
}
