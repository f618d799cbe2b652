import { FlagError, intFlag as int, parseGoFlags } from '@asterism/service-runtime';

/** Keyservice configuration, from flags (reference flags and defaults, docs/protocol/key-hierarchy.md). */
export interface KeyServiceConfig {
  port: number;
  host: string;
  masterSecretPath: string;
  saltPath: string;
  metricsPort: number;
  verbosity: number;
  /** gRPC serving processes; above 1 the service runs on node:cluster (src/cluster.ts). */
  workers: number;
}

export const USAGE = `Usage: keyservice [flags]

Derives data keys from the cluster master secret (kms.API/GetDataKey, plaintext gRPC,
cluster-internal). Keys are HKDF-SHA256(master secret, salt, "key-" + id, length).

Flags:
  --port <n>            gRPC port (default 9000)
  --host <addr>         listen address (default 0.0.0.0)
  --master-secret <p>   file with the raw master secret, at least 16 bytes
                        (default /var/config/mastersecret)
  --salt <p>            file with the raw salt, at least 32 bytes (default /var/config/salt)
  --metrics-port <n>    Prometheus /metrics port, 0 = any free port, -1 = off (default 9101)
  --workers <n>         serving processes sharing the port (node:cluster), 1-64 (default 1)
  -v <n>                log verbosity: <=-1 debug, 0 info, 1 warn, >=2 error (default 0)
  -h, --help            show this help

Also serves grpc.health.v1 on the gRPC port. Stops gracefully on SIGTERM.`;

export { FlagError };

/** Parses argv (without node and script); returns null when help was requested. */
export function parseFlags(argv: string[]): KeyServiceConfig | null {
  const values = parseGoFlags(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    'master-secret': { type: 'string' },
    salt: { type: 'string' },
    'metrics-port': { type: 'string' },
    v: { type: 'string' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return null;
  return {
    port: int('port', values.port, 9000, 0, 65535),
    host: values.host ?? '0.0.0.0',
    masterSecretPath: values['master-secret'] ?? '/var/config/mastersecret',
    saltPath: values.salt ?? '/var/config/salt',
    metricsPort: int('metrics-port', values['metrics-port'], 9101, -1, 65535),
    verbosity: int('v', values.v, 0, -10, 10),
    workers: int('workers', values.workers, 1, 1, 64),
  };
}
