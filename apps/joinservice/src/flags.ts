import { AttestationError, parseTcbStatuses, Variant, type CloudProvider, type TcbVerdictStatus, type UpcomingTcbMinimum } from '@asterism/attestation';
import { FlagError, intFlag as int, parseGoFlags } from '@asterism/service-runtime';

/** Joinservice configuration: the reference's flags (docs/protocol/join-ticket.md) plus Asterism's paths and ports. */
export interface JoinServiceConfig {
  cloudProvider: CloudProvider;
  keyServiceEndpoint: string;
  variant: Variant;
  verbosity: number;
  host: string;
  port: number;
  metricsPort: number;
  /** Folder with `attestationConfig` and `measurementSalt` (the join-config ConfigMap volume). */
  configDir: string;
  /** kubeadm ClusterConfiguration (certSANs become SSH principals). */
  kubeadmConfigPath: string;
  /** Folder with admin.conf and pki/ (host path on control-plane nodes). */
  kubernetesDir: string;
  /** Kubeconfig for the API server; undefined = in-cluster service account. */
  kubeconfig: string | undefined;
  /** `host:port` written into tickets; undefined = `<own VPC IP>:6443` from the metadata API. */
  apiServerEndpoint: string | undefined;
  /** Base URL of the metadata service: qemu metadata API, or the cloud's IMDS / metadata server (tests). */
  metadataUrl: string | undefined;
  /** Base URL of the cloud API (EC2/ELBv2, ARM, Compute Engine) instead of the real one (tests). */
  cloudApiUrl: string | undefined;
  /** Token-bucket rate limit per peer host. */
  ratePerSecond: number;
  rateBurst: number;
  /** Never contact vendor collateral services (Intel PCS, AMD KDS); serve persisted or configured collateral only. */
  collateralOffline: boolean;
  /** `strict` (default): identity bound to attestation (docs/adr/0008); `off`: the reference's behaviour. */
  identityBinding: IdentityBindingMode;
  /** The local cluster's metadata file (peer names and roles by IP) instead of the qemu metadata API. */
  metadataFile: string | undefined;
  /** AMD KDS base URL for SEV-SNP collateral (mirrors, tests); undefined = AMD's. */
  amdKdsUrl: string | undefined;
  /** Intel PCS base URL for TDX collateral (a caching service, mirrors, tests); undefined = Intel's. */
  intelPcsUrl: string | undefined;
  /** Intel SGX Root CA CRL URL (mirrors, tests); undefined = Intel's distribution point. */
  intelRootCrlUrl: string | undefined;
  /** TDX: TCB statuses the validators accept (docs/protocol/tdx-dcap.md); undefined = the default set. */
  tdxAcceptedTcbStatuses: TcbVerdictStatus[] | undefined;
  /** SEV-SNP: a minimum TCB that takes effect at a date (warned about 30 days before, then enforced). */
  snpUpcomingMinimumTcb: UpcomingTcbMinimum | undefined;
}

/** Values of `--identity-binding`. */
export type IdentityBindingMode = 'strict' | 'off';

export const USAGE = `Usage: joinservice [flags]

Issues join tickets to attested nodes (join.API over aTLS, clients must attest): disk keys from the
keyservice, a kubeadm bootstrap token, a kubelet certificate, control-plane files and an SSH host
certificate.

Flags (reference-compatible):
  --cloud-provider <p>         aws|azure|gcp|openstack|stackit|qemu (case-insensitive, required;
                               --csp is accepted as an alias)
  --attestation-variant <v>    attestation variant of joining nodes, e.g. qemu-vtpm (required)
  --key-service-endpoint <e>   keyservice host:port (default key-service.kube-system:9000)
  -v <n>                       log verbosity: <=-1 debug, 0 info, 1 warn, >=2 error (default 0)

Asterism flags:
  --host <addr>                listen address (default 0.0.0.0)
  --port <n>                   gRPC port (default 9090)
  --metrics-port <n>           Prometheus /metrics port, 0 = any free port, -1 = off (default 9092)
  --config-dir <dir>           attestationConfig + measurementSalt (default /var/config)
  --kubeadm-config <file>      kubeadm ClusterConfiguration (default /var/kubeadm-config/ClusterConfiguration)
  --kubernetes-dir <dir>       admin.conf and pki/ (default /etc/kubernetes)
  --kubeconfig <file>          API server access (default: in-cluster service account)
  --api-server-endpoint <e>    host:port put into tickets (default: <own VPC IP>:6443 from metadata)
  --metadata-url <url>         metadata service base URL: the qemu metadata API (qemu), or the
                               IMDS / metadata server instead of the link-local one (aws|azure|gcp)
  --cloud-api-url <url>        aws|azure|gcp: EC2/ELBv2, ARM or Compute Engine base URL instead of
                               the real one (emulators in tests)
  --rate-limit <n>             join requests per second per peer host (default 5)
  --rate-burst <n>             burst per peer host (default 20)
  --identity-binding <m>       strict (default): a disk is bound to the attestation key and node name
                               of its first join; node names and the control-plane role come from the
                               metadata source (peer IP), never from the request. off: the reference's
                               behaviour (any attested node gets what it asks for). docs/adr/0008
  --metadata-file <file>       peer names/roles from the local cluster's metadata file (instances[])
                               instead of the qemu metadata API (--metadata-url)
  --collateral-offline         TDX/SEV-SNP: use only collateral persisted in ConfigMaps (or configured), never Intel PCS / AMD KDS
  --amd-kds-url <url>          SEV-SNP: AMD KDS base URL (default AMD's; a mirror or a local replay)
  --intel-pcs-url <url>        TDX: Intel PCS base URL (default Intel's; a caching service with the
                               same paths, a mirror or a local replay)
  --intel-root-crl-url <url>   TDX: Intel SGX Root CA CRL URL (default Intel's distribution point)
  --tdx-accepted-tcb-statuses <list>
                               TDX: comma-separated TCB statuses that pass (must include UpToDate,
                               never Revoked; default UpToDate,SWHardeningNeeded,ConfigurationNeeded,
                               ConfigurationAndSWHardeningNeeded)
  --snp-upcoming-minimum-tcb <bl.tee.snp.ucode@YYYY-MM-DD>
                               SEV-SNP: minimum TCB from that date (UTC); nodes below it are warned
                               about (log + joinservice_snp_refusal_risks_total) 30 days before
  -h, --help                   show this help

The attestation config file is re-read whenever it changes (ConfigMap updates included); in-flight
joins finish with the config they started with. Also serves grpc.health.v1; stops on SIGTERM.`;

export { FlagError };

const PROVIDERS: Record<string, CloudProvider> = { aws: 'AWS', azure: 'Azure', gcp: 'GCP', openstack: 'OpenStack', stackit: 'OpenStack', qemu: 'QEMU' };

const OPTIONS = {
  'cloud-provider': { type: 'string' },
  csp: { type: 'string' },
  'key-service-endpoint': { type: 'string' },
  'attestation-variant': { type: 'string' },
  v: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'metrics-port': { type: 'string' },
  'config-dir': { type: 'string' },
  'kubeadm-config': { type: 'string' },
  'kubernetes-dir': { type: 'string' },
  kubeconfig: { type: 'string' },
  'api-server-endpoint': { type: 'string' },
  'metadata-url': { type: 'string' },
  'cloud-api-url': { type: 'string' },
  'rate-limit': { type: 'string' },
  'rate-burst': { type: 'string' },
  'collateral-offline': { type: 'boolean' },
  'identity-binding': { type: 'string' },
  'metadata-file': { type: 'string' },
  'amd-kds-url': { type: 'string' },
  'intel-pcs-url': { type: 'string' },
  'intel-root-crl-url': { type: 'string' },
  'tdx-accepted-tcb-statuses': { type: 'string' },
  'snp-upcoming-minimum-tcb': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Raw flag values as parseArgs returns them (strings, unvalidated). */
type FlagValues = ReturnType<typeof readValues>;

function readValues(argv: string[]) {
  return parseGoFlags(argv, OPTIONS);
}

/** Parses argv (without node and script); null = help requested. */
export function parseFlags(argv: string[]): JoinServiceConfig | null {
  const values = readValues(argv);
  if (values.help) return null;
  // Groups run in this order so the first invalid flag reported stays the same.
  return {
    ...providerAndVariant(values),
    ...endpoints(values),
    identityBinding: identityBindingMode(values['identity-binding']),
    ...listenAndPaths(values),
    ...limits(values),
    ...collateral(values),
  };
}

function providerAndVariant(values: FlagValues): Pick<JoinServiceConfig, 'cloudProvider' | 'variant'> {
  if (values['cloud-provider'] !== undefined && values.csp !== undefined && values['cloud-provider'] !== values.csp) throw new FlagError('--cloud-provider and --csp disagree');
  const rawProvider = values['cloud-provider'] ?? values.csp;
  if (!rawProvider) throw new FlagError('--cloud-provider is required');
  const provider = PROVIDERS[rawProvider.toLowerCase()];
  if (!provider) throw new FlagError(`unknown cloud provider "${rawProvider}": want one of ${Object.keys(PROVIDERS).join(', ')}`);
  const rawVariant = values['attestation-variant'];
  if (!rawVariant) throw new FlagError('--attestation-variant is required');
  try {
    return { cloudProvider: provider, variant: Variant.fromString(rawVariant) };
  } catch (err) {
    throw new FlagError(`--attestation-variant: ${(err as Error).message}`);
  }
}

function endpoints(values: FlagValues): Pick<JoinServiceConfig, 'apiServerEndpoint' | 'metadataUrl' | 'cloudApiUrl' | 'keyServiceEndpoint'> {
  const endpoint = values['api-server-endpoint'];
  if (endpoint !== undefined && !/^[^\s:]+:\d{1,5}$/.test(endpoint)) throw new FlagError(`invalid --api-server-endpoint "${endpoint}": want host:port`);
  for (const flag of ['metadata-url', 'cloud-api-url'] as const) {
    const v = values[flag];
    if (v !== undefined && !/^https?:\/\/[^\s]+$/.test(v)) throw new FlagError(`invalid --${flag} "${v}": want an http(s) URL`);
  }
  return {
    apiServerEndpoint: endpoint,
    metadataUrl: values['metadata-url'],
    cloudApiUrl: values['cloud-api-url'],
    keyServiceEndpoint: values['key-service-endpoint'] ?? 'key-service.kube-system:9000',
  };
}

function identityBindingMode(raw: string | undefined): IdentityBindingMode {
  const mode = raw ?? 'strict';
  if (mode !== 'strict' && mode !== 'off') throw new FlagError(`invalid --identity-binding "${mode}": want strict or off`);
  return mode;
}

function listenAndPaths(values: FlagValues) {
  return {
    verbosity: int('v', values.v, 0, -10, 10),
    host: values.host ?? '0.0.0.0',
    port: int('port', values.port, 9090, 0, 65535),
    metricsPort: int('metrics-port', values['metrics-port'], 9092, -1, 65535),
    configDir: values['config-dir'] ?? '/var/config',
    kubeadmConfigPath: values['kubeadm-config'] ?? '/var/kubeadm-config/ClusterConfiguration',
    kubernetesDir: values['kubernetes-dir'] ?? '/etc/kubernetes',
    kubeconfig: values.kubeconfig,
    metadataFile: values['metadata-file'],
  } satisfies Partial<JoinServiceConfig>;
}

function limits(values: FlagValues): Pick<JoinServiceConfig, 'ratePerSecond' | 'rateBurst'> {
  return {
    ratePerSecond: int('rate-limit', values['rate-limit'], 5, 1, 100_000),
    rateBurst: int('rate-burst', values['rate-burst'], 20, 1, 100_000),
  };
}

function collateral(values: FlagValues): Pick<JoinServiceConfig, 'collateralOffline' | 'amdKdsUrl' | 'intelPcsUrl' | 'intelRootCrlUrl' | 'tdxAcceptedTcbStatuses' | 'snpUpcomingMinimumTcb'> {
  return {
    collateralOffline: values['collateral-offline'] === true,
    amdKdsUrl: serviceUrl('amd-kds-url', values['amd-kds-url']),
    intelPcsUrl: serviceUrl('intel-pcs-url', values['intel-pcs-url']),
    intelRootCrlUrl: serviceUrl('intel-root-crl-url', values['intel-root-crl-url']),
    tdxAcceptedTcbStatuses: tcbStatuses(values['tdx-accepted-tcb-statuses']),
    snpUpcomingMinimumTcb: upcomingTcb(values['snp-upcoming-minimum-tcb']),
  };
}

/** A vendor service URL flag: http(s), no trailing slash. */
function serviceUrl(flag: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(raw)) throw new FlagError(`invalid --${flag} "${raw}": want an http(s) URL`);
  return raw.replace(/\/$/, '');
}

function tcbStatuses(raw: string | undefined): TcbVerdictStatus[] | undefined {
  if (raw === undefined) return undefined;
  try {
    return parseTcbStatuses(raw);
  } catch (err) {
    if (err instanceof AttestationError) throw new FlagError(`invalid --tdx-accepted-tcb-statuses: ${err.message}`);
    throw err;
  }
}

function upcomingTcb(raw: string | undefined): UpcomingTcbMinimum | undefined {
  if (raw === undefined) return undefined;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})@(\d{4}-\d{2}-\d{2})$/.exec(raw);
  const effectiveAt = m ? new Date(`${m[5]}T00:00:00Z`) : undefined;
  const parts = m ? m.slice(1, 5).map(Number) : [];
  if (!m || !effectiveAt || Number.isNaN(effectiveAt.getTime()) || effectiveAt.toISOString().slice(0, 10) !== m[5] || parts.some((n) => n > 255)) {
    throw new FlagError(`invalid --snp-upcoming-minimum-tcb "${raw}": want bootloader.tee.snp.microcode@YYYY-MM-DD, each version 0-255`);
  }
  const [bootloader, tee, snp, microcode] = parts as [number, number, number, number];
  return { tcb: { bootloader, tee, snp, microcode }, effectiveAt };
}
