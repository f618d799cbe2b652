import { Variant, type CloudProvider } from '@asterism/attestation';
import { FlagError, intFlag as int, parseGoFlags } from '@asterism/service-runtime';
import { parseSourceFlags, SOURCE_FLAG_OPTIONS, sourceFlagsUsage, type ValidatorSourceConfig } from '@asterism/validator-sources';

/** Joinservice configuration: the reference's flags (docs/protocol/join-ticket.md) plus Asterism's paths and ports. */
export interface JoinServiceConfig extends ValidatorSourceConfig {
  cloudProvider: CloudProvider;
  keyServiceEndpoint: string;
  readonly variant: Variant;
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
  /** Token-bucket rate limit per peer host. */
  ratePerSecond: number;
  rateBurst: number;
  /** `strict` (default): identity bound to attestation (docs/adr/0008); `off`: the reference's behaviour. */
  identityBinding: IdentityBindingMode;
  /** The local cluster's metadata file (peer names and roles by IP) instead of the qemu metadata API. */
  metadataFile: string | undefined;
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
${sourceFlagsUsage(31)}
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
  'rate-limit': { type: 'string' },
  'rate-burst': { type: 'string' },
  'identity-binding': { type: 'string' },
  'metadata-file': { type: 'string' },
  ...SOURCE_FLAG_OPTIONS,
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
  const provider = providerAndVariant(values);
  return {
    ...provider,
    ...endpoints(values),
    identityBinding: identityBindingMode(values['identity-binding']),
    ...listenAndPaths(values),
    ...limits(values),
    ...parseSourceFlags(provider.variant, values),
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

function endpoints(values: FlagValues): Pick<JoinServiceConfig, 'apiServerEndpoint' | 'metadataUrl' | 'keyServiceEndpoint'> {
  const endpoint = values['api-server-endpoint'];
  if (endpoint !== undefined && !/^[^\s:]+:\d{1,5}$/.test(endpoint)) throw new FlagError(`invalid --api-server-endpoint "${endpoint}": want host:port`);
  const metadataUrl = values['metadata-url'];
  if (metadataUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(metadataUrl)) throw new FlagError(`invalid --metadata-url "${metadataUrl}": want an http(s) URL`);
  return {
    apiServerEndpoint: endpoint,
    metadataUrl,
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
