/**
 * Flags of a simulated node (main.ts): the bootstrapper's own flags (apps/bootstrapper, parsed
 * there) plus the ones only the simulated runtime has: the services node 0 starts itself, the
 * API server port, the verification service this process serves, and `--local-apps`.
 */
import { FlagError, intFlag as int } from '@asterism/service-runtime';
import { USAGE } from '@asterism/bootstrapper/runtime';

/** The simulated runtime's settings. */
export interface SimulatedFlags {
  /** Node 0: the attestation config the joinservice enforces. */
  joinAttestationConfig: string | undefined;
  keyServicePort: number;
  localJoinServicePort: number;
  /** API server port (0 = free port). */
  apiServerPort: number;
  /** Verification service ports (gRPC, HTTP) served after bootstrapping (0 = off). */
  verifyGrpcPort: number;
  verifyHttpPort: number;
  /**
   * JSON file naming the bundles (and Node flags) of the keyservice, joinservice and
   * verification-service programs (programs.ts); absent: they run from the sources.
   */
  localApps: string | undefined;
}

/** Usage text: the bootstrapper's and the simulated runtime's flags. */
export const SIMULATED_USAGE = `${USAGE.replace(/^Usage: bootstrapper/, 'Usage: simulated-node')}

Simulated node runtime (tools/local-cluster, docs/adr/0005-local-kubernetes-backend.md):
  --k8s-backend local            the only value here (default local)
  --join-attestation-config <f>  node 0: attestation config the joinservice enforces
  --key-service-port <n>         node 0: keyservice port (default 9009)
  --local-join-service-port <n>  node 0: joinservice port (default 30090)
  --api-server-port <n>          node 0: API server port, 0 = free (default 6443)
  --verify-grpc-port <n>         verification service gRPC port on --init-host, served after
                                 bootstrapping; 0 = off (default 30081)
  --verify-http-port <n>         verification service HTTP port (default 30080)
  --local-apps <file>            JSON file with the bundles and Node flags of the keyservice,
                                 joinservice and verification-service programs (as the local
                                 cluster builds them); with a verification-service program a node
                                 with nothing else to supervise hands its verification service to
                                 it and exits (default: the sources through tsx, verification served
                                 by this process)`;

const NAMES = ['k8s-backend', 'join-attestation-config', 'key-service-port', 'local-join-service-port', 'api-server-port', 'verify-grpc-port', 'verify-http-port', 'local-apps'] as const;
type Name = (typeof NAMES)[number];

/**
 * Takes the simulated runtime's flags out of `argv` (`--name=value` or `--name value`, one or two
 * dashes) and returns them parsed, with the rest for the bootstrapper's parser.
 */
export function splitSimulatedFlags(argv: string[]): { flags: SimulatedFlags; rest: string[] } {
  const raw: Partial<Record<Name, string>> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--?([a-z0-9-]+)(?:=(.*))?$/s.exec(argv[i]!);
    const name = m?.[1] as Name | undefined;
    if (!m || !name || !(NAMES as readonly string[]).includes(name)) {
      rest.push(argv[i]!);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new FlagError(`--${name} needs a value`);
    raw[name] = value;
  }
  if ((raw['k8s-backend'] ?? 'local') !== 'local') throw new FlagError(`unknown --k8s-backend "${raw['k8s-backend']}": a simulated node runs the local backend (kubeadm nodes run apps/bootstrapper)`);
  if (raw['local-apps'] === '') throw new FlagError('--local-apps needs a file');
  return {
    flags: {
      joinAttestationConfig: raw['join-attestation-config'],
      keyServicePort: int('key-service-port', raw['key-service-port'], 9009, 1, 65535),
      localJoinServicePort: int('local-join-service-port', raw['local-join-service-port'], 30090, 1, 65535),
      apiServerPort: int('api-server-port', raw['api-server-port'], 6443, 0, 65535),
      verifyGrpcPort: int('verify-grpc-port', raw['verify-grpc-port'], 30081, 0, 65535),
      verifyHttpPort: int('verify-http-port', raw['verify-http-port'], 30080, 0, 65535),
      localApps: raw['local-apps'],
    },
    rest,
  };
}
