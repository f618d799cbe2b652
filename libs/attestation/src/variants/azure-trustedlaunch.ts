/**
 * The `azure-trustedlaunch` variant (docs/protocol/cloud-vtpm-variants.md §2): the vTPM's
 * attestation key persisted at 0x81000003 is certified by Azure; the AK certificate lives in NV
 * 0x01C101D0. The issuer ships it with its issuing CA (fetched from the certificate's
 * "CA Issuers" URL) as instance info `{"AkCert", "CA"}`; the validator chains the certificate to
 * a configured root at the verification time and requires `ak_pub` to be the certified key.
 */
import { X509Certificate } from 'node:crypto';
import type { TpmClient, TpmtPublic } from '@asterism/tpm';
import { httpCertificateFetcher, type CertificateFetcher } from '../cloud/http.js';
import { documentAkPublic, parseCertificate, requireAkIs } from '../cloud/keys.js';
import { encodeCertificate } from '../config/fields.js';
import type { MeasurementsOnlyConfig } from '../config/types.js';
import { vtpmDefaults } from '../measurements/defaults.js';
import type { ConfigCodec, VariantDescriptor, ValidatorConstructor } from './descriptor.js';
import { AttestationError } from '../errors.js';
import { goBytes, goBytesValue, goField, parseGoJsonObject } from '../go-json.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import type { Measurement } from '../measurements/measurement.js';
import { VariantId } from '../variant.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';
import { VtpmIssuer } from '../vtpm/issuer.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { fetchIssuer, verifyAkCertificateChain } from '../azure/ak-cert-chain.js';
import { AZURE_VTPM_ROOT_2023_PEM } from '../azure/vtpm-roots.js';
import { loadAzurePersistedAk } from '../azure/persisted-ak.js';

/** The variant's identity: its name and certificate-extension OID (docs/protocol/attestation-variants.md). */
const VARIANT = new VariantId('azure-trustedlaunch', '1.3.9900.4.2');

/** NV index of the Trusted Launch AK certificate (DER). */
export const AZURE_AK_CERT_NV_INDEX = 0x01c101d0;

/** azure-trustedlaunch instance info: Go JSON `{"AkCert": b64(DER), "CA": b64(DER)}`. */
export interface TrustedLaunchInstanceInfo {
  readonly akCert: Buffer;
  readonly ca: Buffer;
}

/** Encodes the instance info as the reference writes it. */
export function encodeTrustedLaunchInstanceInfo(info: TrustedLaunchInstanceInfo): Buffer {
  return Buffer.from(JSON.stringify({ AkCert: goBytesValue(info.akCert), CA: goBytesValue(info.ca) }));
}

/** Decodes the instance info; DOCUMENT_MALFORMED, or AK_UNTRUSTED when there is no AK certificate. */
export function decodeTrustedLaunchInstanceInfo(bytes: Uint8Array | null): TrustedLaunchInstanceInfo {
  if (!bytes || bytes.length === 0) throw new AttestationError('AK_UNTRUSTED', 'azure-trustedlaunch document has no instance info (AK certificate)', { details: { field: 'InstanceInfo' } });
  const obj = parseGoJsonObject(bytes, 'azure-trustedlaunch instance info');
  const akCert = goBytes(goField(obj, 'AkCert'), 'AkCert');
  if (akCert.length === 0) throw new AttestationError('AK_UNTRUSTED', 'azure-trustedlaunch instance info has no AkCert', { details: { field: 'AkCert' } });
  return { akCert, ca: goBytes(goField(obj, 'CA'), 'CA') };
}

/** Options of the issuer (tests point the fetcher at a local server). */
export interface AzureTrustedLaunchIssuerOptions {
  readonly fetchCertificate?: CertificateFetcher;
  readonly eventLog?: () => Promise<Buffer>;
}

/** azure-trustedlaunch issuer over the VM's vTPM. */
export class AzureTrustedLaunchIssuer extends VtpmIssuer {
  constructor(openTpm: () => Promise<TpmClient>, options: AzureTrustedLaunchIssuerOptions = {}) {
    const fetcher = options.fetchCertificate ?? httpCertificateFetcher();
    super({
      variant: VARIANT,
      openTpm,
      akKind: 'rsa',
      ...(options.eventLog ? { eventLog: options.eventLog } : {}),
      loadAttestationKey: loadAzurePersistedAk,
      instanceInfo: async (tpm, _extraData, signal) => {
        const akCert = await tpm.nvRead(AZURE_AK_CERT_NV_INDEX);
        const ca = await fetchIssuer(parseCertificate(akCert, 'AK certificate from NV 0x01C101D0'), fetcher, signal);
        if (!ca) throw new Error('failed to load CA certificate from the AK certificate\'s CA Issuers URLs');
        return encodeTrustedLaunchInstanceInfo({ akCert, ca: ca.raw });
      },
    });
  }
}

/** What the azure-trustedlaunch trust decision needs besides the document. */
export interface TrustedLaunchTrustOptions {
  /** Configured trust anchors (the config's `akRootKey`, else the embedded 2023 root). */
  readonly roots: readonly X509Certificate[];
  /** Follows "CA Issuers" URLs for links the document lacks; none = only the document's CA. */
  readonly fetchCertificate?: CertificateFetcher;
  readonly clock?: () => Date;
}

/** The AK an azure-trustedlaunch document may be trusted with (the validator's `getTrustedKey`). */
export async function trustedLaunchTrustedKey(doc: VtpmAttestationDocument, options: TrustedLaunchTrustOptions, signal?: AbortSignal): Promise<TpmtPublic> {
  const info = decodeTrustedLaunchInstanceInfo(doc.instanceInfo);
  const akCert = parseCertificate(info.akCert, 'AK certificate');
  const intermediates = info.ca.length > 0 ? [parseCertificate(info.ca, 'CA certificate')] : [];
  await verifyAkCertificateChain(
    { akCert, intermediates, roots: options.roots, at: (options.clock ?? (() => new Date()))(), ...(options.fetchCertificate ? { fetcher: options.fetchCertificate } : {}) },
    signal,
  );
  const ak = documentAkPublic(doc);
  requireAkIs(ak, akCert.publicKey, 'AK certificate');
  return ak;
}

/** The embedded default root. */
export function defaultTrustedLaunchRoots(): X509Certificate[] {
  return [new X509Certificate(AZURE_VTPM_ROOT_2023_PEM)];
}

/** Options of {@link AzureTrustedLaunchValidator}. */
export interface AzureTrustedLaunchValidatorOptions extends Partial<TrustedLaunchTrustOptions> {
  readonly measurements: ReadonlyMap<number, Measurement>;
  readonly logger?: AttestationLogger;
}

/** azure-trustedlaunch validator: the vTPM checks with the AK certified by Azure. */
export class AzureTrustedLaunchValidator extends VtpmValidator {
  constructor(options: AzureTrustedLaunchValidatorOptions) {
    const trust: TrustedLaunchTrustOptions = { ...options, roots: options.roots ?? defaultTrustedLaunchRoots() };
    super({
      variant: VARIANT,
      measurements: options.measurements,
      logger: options.logger ?? NOP_ATTESTATION_LOGGER,
      getTrustedKey: (doc, _extraData, signal) => trustedLaunchTrustedKey(doc, trust, signal),
    });
  }
}

/** Builds the azure-trustedlaunch validator from its config (the descriptor's validator). */
export const azureTrustedLaunchValidatorFactory: ValidatorConstructor = (config, logger, deps) => {
  const root = (config as MeasurementsOnlyConfig).akRootKey;
  return new AzureTrustedLaunchValidator({
    measurements: config.measurements,
    logger,
    ...(root ? { roots: [new X509Certificate(root)] } : {}),
    ...deps.azureTrustedLaunch,
  });
};

/** The measurements plus our optional `akRootKey` (docs/protocol/cloud-vtpm-variants.md §2.3), written only when set. */
const trustedLaunchCodec: ConfigCodec = {
  decode: ({ reader: r, obj, measurements }) => ({ variant: 'azure-trustedlaunch', measurements: measurements(true), akRootKey: r.certificate(r.get(obj, 'akRootKey') ?? '', 'akRootKey') }),
  encode: (cfg, m) => {
    const root = (cfg as MeasurementsOnlyConfig).akRootKey;
    return root ? `{${m},"akRootKey":${encodeCertificate(root)}}` : `{${m}}`;
  },
  defaults: (measurements) => ({ variant: 'azure-trustedlaunch', measurements }),
};

/** `azure-trustedlaunch`: the Azure vTPM, its AK certified by Azure's CA (`ak-ca-issuers` fetches missing links). */
export const azureTrustedLaunchVariant: VariantDescriptor = {
  variant: VARIANT,
  csp: 'Azure',
  offeredBy: { Azure: 2 },
  platform: 'tpm',
  config: trustedLaunchCodec,
  defaultMeasurements: vtpmDefaults,
  issuer: (env) => new AzureTrustedLaunchIssuer(env.openTpm, { eventLog: env.eventLog }),
  validator: azureTrustedLaunchValidatorFactory,
  sources: ['ak-ca-issuers'],
};
