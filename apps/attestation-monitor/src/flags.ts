import { Variant } from '@asterism/attestation';
import { FlagError, intFlag as int, parseGoFlags } from '@asterism/service-runtime';
import { parseSourceFlags, SOURCE_FLAG_OPTIONS, sourceFlagsUsage, type ValidatorSourceConfig } from '@asterism/validator-sources';

/** The monitor's configuration, from flags (docs/protocol/continuous-attestation.md). */
export interface MonitorConfig {
  kubeconfig: string | undefined;
  variant: Variant;
  intervalMs: number;
  /** Each round starts after interval * (1 ± jitter). */
  jitter: number;
  graceMs: number;
  timeoutMs: number;
  concurrency: number;
  /** The verification service's gRPC port on every node (the NodePort). */
  verifyPort: number;
  /** Where the cluster ID comes from: the keyservice (with join-config's salt), or given. */
  keyServiceEndpoint: string;
  clusterId: Buffer | undefined;
  namespace: string;
  leaseName: string;
  /** This replica's name in the Lease (the pod name). */
  identity: string;
  metricsPort: number;
  verbosity: number;
  /** The variant and the validators' outside sources (collateral caches, cloud APIs), as the joinservice's. */
  sources: ValidatorSourceConfig;
}

export const USAGE = `Usage: attestation-monitor [flags]

Re-attests every node through its verification service with a fresh nonce every interval,
against the attestation config in ConfigMap join-config; records the AttestationVerified Node
condition, Events and metrics, and quarantines nodes that fail (taint asterism.dev/attestation,
deny list). One replica works at a time (Lease leader election).

Flags:
  --variant <v>                 attestation variant (as the joinservice's)
  --interval <s>                seconds between rounds, 5-3600 (default 60)
  --jitter <percent>            random spread of each interval, 0-50 (default 20)
  --grace <s>                   an unreachable node is unverified after this, 0-86400 (default 180)
  --timeout <s>                 per-node deadline, 1-120 (default 10)
  --concurrency <n>             nodes checked at once, 1-64 (default 4)
  --verify-port <n>             verification service gRPC port on each node (default 30081)
  --key-service-endpoint <a>    keyservice (the cluster ID is derived from the measurement
                                secret and join-config's salt) (default key-service.kube-system:9000)
  --cluster-id <hex|base64>     the cluster ID instead (no keyservice call)
  --namespace <ns>              namespace of join-config, the deny list and the Lease (default kube-system)
  --lease <name>                leader election Lease (default asterism-attestation-monitor)
  --identity <name>             this replica in the Lease (default $POD_NAME or the host name)
  --kubeconfig <file>           out-of-cluster kubeconfig (default: in-cluster)
  --metrics-port <n>            Prometheus /metrics, -1 = off (default 9206)
  --cloud-api-url <url>         aws: EC2 API base URL instead of the real one (a local emulator)
${sourceFlagsUsage(32)}
  -v <n>                        log verbosity (default 0)
  -h, --help                    show this help

Give the collateral flags the joinservice's values: both use the collateral caches kept in
kube-system ConfigMaps, so a node is judged with the same collateral at join and afterwards.`;

/** Parses a 32-byte cluster ID given as 64 hex digits or base64. */
export function parseClusterIdFlag(text: string): Buffer {
  const t = text.trim();
  const id = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (id.length !== 32) throw new FlagError('invalid --cluster-id: want 32 bytes as 64 hex digits or base64');
  return id;
}

/** Parses argv (without node and script); null when help was requested. */
export function parseFlags(argv: string[], env: NodeJS.ProcessEnv = process.env, hostname = 'attestation-monitor'): MonitorConfig | null {
  const s = { type: 'string' } as const;
  const v = parseGoFlags(argv, {
    variant: s, interval: s, jitter: s, grace: s, timeout: s, concurrency: s, 'verify-port': s, 'key-service-endpoint': s,
    'cluster-id': s, namespace: s, lease: s, identity: s, kubeconfig: s, 'metrics-port': s, v: s,
    ...SOURCE_FLAG_OPTIONS,
    help: { type: 'boolean', short: 'h' },
  });
  if (v.help) return null;
  if (!v.variant) throw new FlagError('--variant is required');
  let variant: Variant;
  try {
    variant = Variant.fromString(v.variant);
  } catch (err) {
    throw new FlagError(`invalid --variant: ${(err as Error).message}`);
  }
  return {
    kubeconfig: v.kubeconfig,
    variant,
    intervalMs: int('interval', v.interval, 60, 5, 3600) * 1000,
    jitter: int('jitter', v.jitter, 20, 0, 50) / 100,
    graceMs: int('grace', v.grace, 180, 0, 86400) * 1000,
    timeoutMs: int('timeout', v.timeout, 10, 1, 120) * 1000,
    concurrency: int('concurrency', v.concurrency, 4, 1, 64),
    verifyPort: int('verify-port', v['verify-port'], 30081, 1, 65535),
    keyServiceEndpoint: v['key-service-endpoint'] ?? 'key-service.kube-system:9000',
    clusterId: v['cluster-id'] === undefined ? undefined : parseClusterIdFlag(v['cluster-id']),
    namespace: v.namespace ?? 'kube-system',
    leaseName: v.lease ?? 'asterism-attestation-monitor',
    identity: v.identity ?? env.POD_NAME ?? hostname,
    metricsPort: int('metrics-port', v['metrics-port'], 9206, -1, 65535),
    verbosity: int('v', v.v, 0, -10, 10),
    sources: parseSourceFlags(variant, v),
  };
}
