/**
 * The `qemu-tdx` variant (no TPM): the issuer asks the TDX module for a quote whose REPORT_DATA
 * is SHA256(userData || nonce) zero-padded to 64 bytes; the validator verifies the quote with
 * DCAP collateral, checks that binding and compares MRTD + RTMR0..3 (indices 0..4) with the
 * config's measurements (docs/protocol/tdx-dcap.md).
 */
import { join } from 'node:path';
import { CONFIGFS_TSM_REPORT_DIR, NODE_TSM_FS } from '../tsm/configfs-tsm.js';
import type { MeasurementsOnlyConfig } from '../config/types.js';
import { decodeMrServiceTd } from '../config/current-gen.js';
import { qemuTdxDefaults } from '../measurements/defaults.js';
import { collateralLookup } from '../collateral/as-attestation-error.js';
import { missingSource, type ConfigCodec, type VariantDescriptor, type ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { compareExtraData, makeExtraData } from '../extra-data.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger, type Issuer, type Validator } from '../interfaces.js';
import type { Measurement } from '../measurements/measurement.js';
import { enforceMeasurements } from '../measurements/compare.js';
import { VariantId } from '../variant.js';
import { decodeTdxDocument, encodeTdxDocument, tdMeasurements } from '../tdx/document.js';
import type { TdxCollateralSource } from '../tdx/pcs-collateral.js';
import { ConfigfsTsmQuoteProvider, platformOf, type TdxQuoteProvider, type TdxQuoteVerifier } from '../tdx/quote-provider.js';
import { checkMrServiceTd } from '../tdx/service-td.js';
import { parseTdxQuote } from '../tdx/quote.js';
import type { TdxStatusPolicy } from '../tdx/status-policy.js';
import { DcapVerifier } from '../tdx/verifier.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('qemu-tdx', '1.3.9900.5.99');

/** qemu-tdx issuer. */
export class QemuTdxIssuer implements Issuer {
  readonly variant = VARIANT;

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
  readonly variant = VARIANT;
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

/** Builds the qemu-tdx validator with the process's TDX collateral (`intel-pcs`) and TCB status policy. */
export const qemuTdxValidatorFactory: ValidatorConstructor = (config, logger, deps) => {
  if (!deps.tdx) throw missingSource(VARIANT, 'intel-pcs');
  const mrServiceTd = (config as MeasurementsOnlyConfig).mrServiceTd;
  return new QemuTdxValidator({ measurements: config.measurements, logger, ...deps.tdx, ...(mrServiceTd ? { mrServiceTd } : {}) });
};

/** The measurements plus our optional `mrServiceTd` (../config/current-gen.ts), written only when set. */
const qemuTdxCodec: ConfigCodec = {
  decode: ({ reader, obj, measurements }) => {
    const mrServiceTd = decodeMrServiceTd(reader, obj);
    return { variant: 'qemu-tdx', measurements: measurements(true), ...(mrServiceTd ? { mrServiceTd } : {}) };
  },
  encode: (cfg, m) => {
    const mrServiceTd = (cfg as MeasurementsOnlyConfig).mrServiceTd;
    return mrServiceTd ? `{${m},"mrServiceTd":"${mrServiceTd.toString('hex')}"}` : `{${m}}`;
  },
  defaults: (measurements) => ({ variant: 'qemu-tdx', measurements }),
};

/** `qemu-tdx`: a TD without a TPM; quotes through configfs-tsm, verified with Intel PCS collateral (`intel-pcs`). */
export const qemuTdxVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'QEMU',
  offeredBy: {},
  platform: 'tdx',
  config: qemuTdxCodec,
  defaultMeasurements: qemuTdxDefaults,
  issuer: (env) => new QemuTdxIssuer(new ConfigfsTsmQuoteProvider(join(env.stateRoot, CONFIGFS_TSM_REPORT_DIR), env.tsmFs ?? NODE_TSM_FS, { devicePath: join(env.stateRoot, 'dev/tdx_guest') })),
  validator: qemuTdxValidatorFactory,
  sources: ['intel-pcs'],
};
