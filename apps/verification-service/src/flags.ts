/** Flags of the verification-service program (main.ts), the chart's per-node pod. */
import { isIP } from 'node:net';
import type { Variant } from '@asterism/attestation';
import { FlagError, intFlag as int, parseGoFlags } from '@asterism/service-runtime';
import { attestationVariant, tpmFlag } from '@asterism/node-platform';

/** Configuration of the verification-service program. */
export interface VerificationServiceConfig {
  verbosity: number;
  variant: Variant;
  /** `/dev/tpmrm0`, or `unix:<path>` / `tcp:<host>:<port>` for swtpm. */
  tpm: string;
  /** Prefix of the configfs-tsm / TDX sysfs paths (`/` in a pod; a folder in tests). */
  stateRoot: string;
  /** Cloud provider (QEMU, AWS, Azure, GCP): on a cloud the SNP issuers ask its metadata service. */
  csp: string;
  /** That metadata service's base URL ('' = the cloud's link-local default). */
  metadata: string;
  /** Listen address of both servers (inside the pod's own network namespace). */
  host: string;
  grpcPort: number;
  httpPort: number;
}

/** Usage text (`--help`). */
export const VERIFY_USAGE = `Usage: verification-service [flags]

Serves the node's verification service (docs/protocol/verification.md): verify.API/GetAttestation
over plain gRPC and GET /?nonce=<base64url> over HTTP, each answered with an attestation document
of this node over user data "VerifyService" and the caller's nonce. The TPM is opened for every
document and closed after it. Run by the asterism-services chart as a DaemonSet on every node.

Flags (environment in brackets):
  -v <n>                     log verbosity: <=-1 debug, 0 info, 1 warn, >=2 error (default 0)
  --attestation-variant <v>  [CONSTEL_ATTESTATION_VARIANT] the node's variant, e.g. qemu-vtpm (required)
  --tpm <t>                  /dev/tpmrm0, unix:<swtpm socket> or tcp:<host>:<port> (default /dev/tpmrm0)
  --state-root <dir>         prefix of the configfs-tsm and qemu-tdx sysfs paths (default /)
  --csp <p>                  [CONSTEL_CSP] QEMU, AWS, Azure or GCP (default QEMU): on a cloud the
                             SNP issuers read the instance metadata service
  --metadata <url>           that service's base URL (default: the cloud's link-local address)
  --host <addr>              listen address (default 0.0.0.0: the pod's own network namespace)
  --grpc-port <n>            verify.API port (default 9090)
  --http-port <n>            HTTP port (default 8080)
  -h, --help                 show this help`;

/** Parses argv (without node and script) and the environment; null = help requested. */
export function parseVerifyFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): VerificationServiceConfig | null {
  const values = parseGoFlags(argv, {
    v: { type: 'string' },
    'attestation-variant': { type: 'string' },
    tpm: { type: 'string' },
    'state-root': { type: 'string' },
    csp: { type: 'string' },
    metadata: { type: 'string' },
    host: { type: 'string' },
    'grpc-port': { type: 'string' },
    'http-port': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return null;
  const variant = attestationVariant(values['attestation-variant'] ?? env.CONSTEL_ATTESTATION_VARIANT);
  const host = values.host ?? '0.0.0.0';
  if (isIP(host) === 0) throw new FlagError(`invalid --host "${host}": want an IP address`);
  const grpcPort = int('grpc-port', values['grpc-port'], 9090, 0, 65535);
  const httpPort = int('http-port', values['http-port'], 8080, 0, 65535);
  if (grpcPort !== 0 && grpcPort === httpPort) throw new FlagError(`--grpc-port and --http-port are both ${grpcPort}`);
  const csp = values.csp ?? env.CONSTEL_CSP ?? 'QEMU';
  if (!/^(qemu|aws|azure|gcp)$/i.test(csp)) throw new FlagError(`unknown --csp "${csp}": want QEMU, AWS, Azure or GCP`);
  const metadata = values.metadata ?? '';
  if (metadata !== '' && !/^https?:\/\/\S+$/.test(metadata)) throw new FlagError(`invalid --metadata "${metadata}": want an http(s) URL`);
  return { verbosity: int('v', values.v, 0, -10, 10), variant, tpm: tpmFlag(values.tpm), stateRoot: values['state-root'] ?? '/', csp, metadata, host, grpcPort, httpPort };
}
