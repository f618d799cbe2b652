/**
 * The `azure-tdx` variant (docs/protocol/vtpm-attestation.md; docs/protocol/azure-hcl-report.md): a vTPM document whose
 * instance info carries the TDX quote over the HCL report's TD report and the HCL runtime data.
 * The validator trusts the document's AK only when the quote verifies (DCAP, collateral source),
 * the azure-tdx config policy holds, and the quote's REPORT_DATA binds the runtime data naming
 * that AK.
 */
import { decodePublic, type TpmClient, type TpmtPublic } from '@asterism/tpm';
import { embeddedRoot, latestHexVersion, latestVersion } from '../config/shapes.js';
import { encodeCertificate, encodeHexVersion, encodeUintVersion } from '../config/fields.js';
import { INTEL_SGX_ROOT_CA_PEM } from '../config/roots.js';
import type { AzureTdxConfig } from '../config/types.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import { collateralLookup } from '../collateral/as-attestation-error.js';
import { missingSource, type ConfigCodec, type VariantDescriptor, type ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { goBytes, goBytesValue, goField, parseGoJsonObject } from '../go-json.js';
import type { TdxCollateralSource } from '../tdx/pcs-collateral.js';
import { platformOf, type TdxQuoteVerifier } from '../tdx/quote-provider.js';
import { parseTdxQuote } from '../tdx/quote.js';
import type { TdxStatusPolicy } from '../tdx/status-policy.js';
import { DcapVerifier } from '../tdx/verifier.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { VariantId } from '../variant.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';
import { VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { checkHclAkBinding } from '../azure/hcl-ak.js';
import { HCL_REPORT_NV_INDEX, parseTdxHclReport } from '../azure/hcl-report.js';
import { checkAzureTdxPolicy } from '../azure/tdx-policy.js';
import { loadAzurePersistedAk } from '../azure/persisted-ak.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('azure-tdx', '1.3.9900.4.3');

/** azure-tdx instance info: Go JSON `{"AttestationReport": b64(quote), "RuntimeData": b64}`. */
export interface AzureTdxInstanceInfo {
  attestationReport: Buffer;
  runtimeData: Buffer;
}

/** Encodes the instance info. */
export function encodeAzureTdxInstanceInfo(info: AzureTdxInstanceInfo): Buffer {
  return Buffer.from(JSON.stringify({ AttestationReport: goBytesValue(info.attestationReport), RuntimeData: goBytesValue(info.runtimeData) }));
}

/** Decodes the instance info (DOCUMENT_MALFORMED / QUOTE_MISSING). */
export function decodeAzureTdxInstanceInfo(bytes: Uint8Array | null): AzureTdxInstanceInfo {
  if (!bytes || bytes.length === 0) throw new AttestationError('QUOTE_MISSING', 'azure-tdx document has no instance info', { details: { field: 'InstanceInfo' } });
  const obj = parseGoJsonObject(bytes, 'azure-tdx instance info');
  const attestationReport = goBytes(goField(obj, 'AttestationReport'), 'AttestationReport');
  if (attestationReport.length === 0) throw new AttestationError('QUOTE_MISSING', 'azure-tdx instance info has no AttestationReport', { details: { field: 'AttestationReport' } });
  return { attestationReport, runtimeData: goBytes(goField(obj, 'RuntimeData'), 'RuntimeData') };
}

/** Dependencies of the azure-tdx trust decision. */
export interface AzureTdxTrustOptions extends TdxStatusPolicy {
  config: AzureTdxConfig;
  collateral: TdxCollateralSource;
  /** Default: {@link dcapVerifierFor} the config and `acceptedTcbStatuses`. */
  verifier?: TdxQuoteVerifier;
  clock?: () => Date;
}

/**
 * The AK an azure-tdx document may be trusted with (the validator's `getTrustedKey`): verified
 * quote, config policy, then the HCL binding of `ak_pub`.
 */
export async function azureTdxTrustedKey(doc: VtpmAttestationDocument, options: AzureTdxTrustOptions, signal?: AbortSignal): Promise<TpmtPublic> {
  const info = decodeAzureTdxInstanceInfo(doc.instanceInfo);
  const quote = parseTdxQuote(info.attestationReport);
  const verifier = options.verifier ?? dcapVerifierFor(options.config, options);
  const collateral = await collateralLookup(() => options.collateral.collateral(platformOf(quote), signal));
  verifier.verify(quote, collateral, (options.clock ?? (() => new Date()))());
  checkAzureTdxPolicy(quote, options.config);
  let ak: TpmtPublic;
  try {
    ak = decodePublic(doc.attestation?.akPub ?? Buffer.alloc(0));
  } catch (err) {
    throw new AttestationError('AK_UNTRUSTED', `decoding ak_pub: ${(err as Error).message}`, { cause: err });
  }
  checkHclAkBinding(info.runtimeData, quote.body.reportData, ak);
  return ak;
}

/** A DCAP verifier trusting the config's Intel root (the embedded one when unset) with the operator's status policy. */
export function dcapVerifierFor(config: AzureTdxConfig, policy: TdxStatusPolicy = {}): DcapVerifier {
  return new DcapVerifier({
    ...(config.intelRootKey ? { trustedRoot: config.intelRootKey } : {}),
    ...(policy.acceptedTcbStatuses ? { acceptedStatuses: policy.acceptedTcbStatuses } : {}),
  });
}

/** Asks the platform to turn a TD report into a quote (Azure IMDS `/acc/tdquote`). */
export interface TdQuoteClient {
  quote(tdReport: Buffer, signal?: AbortSignal): Promise<Buffer>;
}

/** Azure IMDS quote endpoint base (link-local; the VM's own metadata service). */
export const AZURE_IMDS_BASE_URL = 'http://169.254.169.254';

/** TdQuoteClient over HTTP: POST `{"report": b64url(TD report)}`, answer `{"quote": b64url}`. */
export class ImdsTdQuoteClient implements TdQuoteClient {
  constructor(
    private readonly baseUrl = AZURE_IMDS_BASE_URL,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async quote(tdReport: Buffer, signal?: AbortSignal): Promise<Buffer> {
    const res = await this.fetchImpl(`${this.baseUrl}/acc/tdquote`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ report: tdReport.toString('base64url') }),
      ...(signal ? { signal } : {}),
    });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`quote endpoint answered HTTP ${res.status}`);
    }
    const body = (await res.json().catch(() => undefined)) as { quote?: unknown } | undefined;
    if (typeof body?.quote !== 'string' || !/^[A-Za-z0-9_-]+={0,2}$/.test(body.quote)) throw new Error('quote endpoint answer has no base64url "quote"');
    return Buffer.from(body.quote, 'base64url');
  }
}

/**
 * The azure-tdx issuer's instance info: HCL report from NV 0x01400001 (must be TDX), its TD
 * report quoted by the platform, plus the runtime data.
 */
export async function azureTdxInstanceInfo(tpm: TpmClient, quotes: TdQuoteClient, signal?: AbortSignal): Promise<Buffer> {
  const hcl = parseTdxHclReport(await tpm.nvRead(HCL_REPORT_NV_INDEX));
  const quote = await quotes.quote(hcl.tdReport, signal);
  return encodeAzureTdxInstanceInfo({ attestationReport: quote, runtimeData: hcl.runtimeData });
}

/** Options of the azure-tdx issuer (tests point the quote endpoint at a local server). */
export interface AzureTdxIssuerOptions {
  /** The platform's quote endpoint (default: IMDS `/acc/tdquote`). */
  readonly quotes?: TdQuoteClient;
  /** The raw TCG event log, if the platform exposes one. */
  readonly eventLog?: () => Promise<Buffer>;
}

/**
 * azure-tdx issuer: a vTPM document quoted by the HCL attestation key persisted at 0x81000003,
 * whose instance info carries the TD quote of the HCL report and its runtime data (the runtime
 * data names that AK, and the TD report's REPORT_DATA is the runtime data's SHA-256).
 */
export class AzureTdxIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, options: AzureTdxIssuerOptions = {}) {
    const quotes = options.quotes ?? new ImdsTdQuoteClient();
    super({
      variant: VARIANT,
      openTpm,
      akKind: 'rsa',
      ...(options.eventLog ? { eventLog: options.eventLog } : {}),
      loadAttestationKey: loadAzurePersistedAk,
      instanceInfo: (tpm, _extraData, signal) => azureTdxInstanceInfo(tpm, quotes, signal),
    });
  }
}

/**
 * azure-tdx validator: the vTPM checks (quote, event log, measurements) with the AK trusted by
 * {@link azureTdxTrustedKey}.
 */
export class AzureTdxValidator extends VtpmValidator {
  constructor(options: AzureTdxTrustOptions & { logger?: AttestationLogger }) {
    // One verifier per validator, so its memo of checked collateral stays warm across joins.
    const trust: AzureTdxTrustOptions = { ...options, verifier: options.verifier ?? dcapVerifierFor(options.config, options) };
    super({
      variant: VARIANT,
      measurements: options.config.measurements,
      logger: options.logger ?? NOP_ATTESTATION_LOGGER,
      getTrustedKey: (doc, _extraData, signal) => azureTdxTrustedKey(doc, trust, signal),
    });
  }
}

/** Builds the azure-tdx validator with the process's TDX collateral (`intel-pcs`) and TCB status policy. */
export const azureTdxValidatorFactory: ValidatorConstructor = (config, logger, deps) => {
  if (!deps.tdx) throw missingSource(VARIANT, 'intel-pcs');
  return new AzureTdxValidator({ config: config as AzureTdxConfig, logger, ...deps.tdx });
};

/** Minimum SVNs and TD attributes (values or `"latest"`), optional MRSEAM, the Intel root (docs/protocol/attestation-config.md). */
const azureTdxCodec: ConfigCodec = {
  decode: ({ reader: r, obj, measurements }) => {
    const hexv = (key: string, len: number) => r.hexVersion(r.required(obj, key, key), key, len);
    const uintv = (key: string) => r.uintVersion(r.required(obj, key, key), 0xffff, key);
    return {
      variant: 'azure-tdx',
      measurements: measurements(true),
      qeSVN: uintv('qeSVN'),
      pceSVN: uintv('pceSVN'),
      teeTCBSVN: hexv('teeTCBSVN', 16),
      qeVendorID: hexv('qeVendorID', 16),
      mrSeam: r.hex(r.get(obj, 'mrSeam'), 'mrSeam', 48),
      xfam: hexv('xfam', 8),
      intelRootKey: r.certificate(r.get(obj, 'intelRootKey'), 'intelRootKey'),
    };
  },
  encode: (config, m) => {
    const cfg = config as AzureTdxConfig;
    const seam = cfg.mrSeam.length === 0 ? '' : `,"mrSeam":"${cfg.mrSeam.toString('hex')}"`;
    return (
      `{${m},"qeSVN":${encodeUintVersion(cfg.qeSVN)},"pceSVN":${encodeUintVersion(cfg.pceSVN)},"teeTCBSVN":${encodeHexVersion(cfg.teeTCBSVN)},` +
      `"qeVendorID":${encodeHexVersion(cfg.qeVendorID)}${seam},"xfam":${encodeHexVersion(cfg.xfam)},"intelRootKey":${encodeCertificate(cfg.intelRootKey)}}`
    );
  },
  defaults: (measurements) => ({
    variant: 'azure-tdx',
    measurements,
    qeSVN: latestVersion(),
    pceSVN: latestVersion(),
    teeTCBSVN: latestHexVersion(),
    qeVendorID: latestHexVersion(),
    mrSeam: Buffer.alloc(0),
    xfam: latestHexVersion(),
    intelRootKey: embeddedRoot(INTEL_SGX_ROOT_CA_PEM),
  }),
};

/** `azure-tdx`: an Azure TD with the HCL's vTPM; the TD quote verified with Intel PCS collateral (`intel-pcs`). */
export const azureTdxVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'Azure',
  offeredBy: { Azure: 1 },
  platform: 'tpm',
  config: azureTdxCodec,
  defaultMeasurements: vtpmDefaults,
  issuer: (env) => new AzureTdxIssuer(env.openTpm, { eventLog: env.eventLog, ...(env.metadataUrl ? { quotes: new ImdsTdQuoteClient(env.metadataUrl) } : {}) }),
  validator: azureTdxValidatorFactory,
  sources: ['intel-pcs'],
};
