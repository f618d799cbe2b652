import { isIP } from 'node:net';
import type { Variant } from '@asterism/attestation';
import { parseCloudKind } from '@asterism/metadata';
import { FlagError, intFlag as int, parseGoFlags } from '@asterism/service-runtime';
import { STATE_DISK_PBKDF_PRESETS, type StateDiskPbkdfPreset } from './disk/state-disk.js';
import { attestationVariant, tpmFlag } from '@asterism/node-platform';

/** Bootstrapper configuration: the reference's `-v` and environment (docs/protocol/bootstrapper.md) plus Asterism's paths. */
export interface BootstrapperConfig {
  verbosity: number;
  variant: Variant;
  csp: string;
  /** Prefix for every node path (`/` on a real node; a per-node folder in the local cluster). */
  stateRoot: string;
  /** `/dev/tpmrm0`, or `unix:<path>` / `tcp:<host>:<port>` for swtpm. */
  tpm: string;
  stateDisk: string;
  initialKeyPath: string;
  /** PBKDF of the keyslot holding the cluster-derived disk key. */
  stateDiskPbkdf: StateDiskPbkdfPreset;
  /**
   * The disk-mapper role (docs/adr/0041): format a blank state disk with LUKS2 + dm-integrity, open
   * it and mount it at <state-root>/run/state; off = header-only (hosts without device-mapper).
   */
  mapStateDisk: boolean;
  /**
   * `file:<path>` (static metadata, with `--node-name`) or an http(s) base URL: the qemu metadata
   * API, or on AWS/Azure/GCP the IMDS / metadata server ('' = the cloud's link-local default).
   */
  metadata: string;
  /** AWS/Azure/GCP: EC2/ELBv2, ARM or Compute Engine base URL instead of the real one (emulators). */
  cloudApiUrl: string | undefined;
  nodeName: string | undefined;
  /** Where kubeadm is (default: the one the components installed under /run/state/bin). */
  k8sBinDir: string | undefined;
  initHost: string;
  initPort: number;
  joinServicePort: number;
  logFile: string | undefined;
  /** Addresses used as SSH principals instead of the host's interfaces (local nodes share one host). */
  addresses: string[] | undefined;
  /** Local address of join.API connections (docs/adr/0008: the joinservice names peers by source IP). */
  joinSourceAddress: string | undefined;
  /** Who runs the kubelet and reboots the node: systemd (a VM image) or none (an external supervisor). */
  initSystem: 'systemd' | 'none';
  /** kubeadm backend: registry prefix of the control-plane images (empty = kubeadm's default). */
  imageRepository: string | undefined;
  /** kubeadm backend: preflight checks reported as warnings. */
  ignorePreflightErrors: string[];
  /** kubeadm backend: kube-proxy conntrack.maxPerCore (undefined = kube-proxy's default). */
  kubeProxyConntrackMaxPerCore: number | undefined;
  /** recoverproto.API port while a rebooted node waits for its disk key (0 = off). */
  recoveryPort: number;
  /** upgradeagent.API port: stay resident after bootstrapping as the node's upgrade agent (0 = off, docs/adr/0042-upgrade-agent.md). */
  upgradeAgentPort: number;
  /** Deadline of a join's Kubernetes phase (components, kubeadm join; all attempts), in ms. */
  joinTimeoutMs: number;
}

export const USAGE = `Usage: bootstrapper [flags]

Runs on every new node: serves init.API (aTLS, the node attests itself) for the first node, and
in parallel asks the joinservice for a join ticket. Whichever locks the node first wins; the node
lock extends PCR 15 (RTMR2 on qemu-tdx) with the cluster ID. An initialised node that reboots
rejoins instead.

Flags (environment in brackets):
  -v <n>                         log verbosity: <=-1 debug, 0 info, 1 warn, >=2 error (default 0)
  --attestation-variant <v>      [CONSTEL_ATTESTATION_VARIANT] e.g. qemu-vtpm (required); qemu-tdx uses
                                 <state-root>/sys/... (tdx_guest RTMRs, configfs-tsm quotes), aws- and
                                 gcp-sev-snp configfs-tsm there; the cloud variants' THIM, TD quote
                                 endpoint and GCE metadata are at --metadata
  --csp <p>                      [CONSTEL_CSP] cloud provider: QEMU, AWS, Azure or GCP (case-
                                 insensitive; default QEMU); selects the metadata provider
  --state-root <dir>             prefix of all node paths (default /)
  --tpm <t>                      /dev/tpmrm0, unix:<swtpm socket> or tcp:<host>:<port> (default /dev/tpmrm0)
  --state-disk <dev|file>        LUKS2 state disk (default /dev/mapper/state)
  --initial-key <file>           its initial passphrase (default /run/cryptsetup-keys.d/state.key)
  --state-disk-pbkdf <p>         keyslot KDF for the derived disk key: light (argon2id 8 MiB,
                                 ~0.04 s) or benchmarked (cryptsetup's ~2 s / 1 GiB) (default light)
  --map-state-disk               disk-mapper role: format a blank state disk (LUKS2 + hmac-sha256
                                 integrity), open and mount it at /run/state; a cluster's disk is
                                 opened with the rejoin or recovery key (default off: header only)
  --metadata <src>               file:<path>, a qemu metadata API URL (default http://10.42.0.1:8080),
                                 or on AWS/Azure/GCP the IMDS / metadata server URL (default: the
                                 cloud's own)
  --cloud-api-url <url>          AWS/Azure/GCP: EC2/ELBv2, ARM or Compute Engine base URL instead of
                                 the real one (emulators in tests)
  --node-name <name>             this node's name in a file: metadata source
  --k8s-backend <b>              kubeadm (the only backend of this program; the local cluster's
                                 simulated nodes run tools/simulated-node)
  --k8s-bin-dir <dir>            where kubeadm is (default: the components' /run/state/bin)
  --init-host <addr>             init.API listen address (default 0.0.0.0)
  --init-port <n>                init.API port (default 9000)
  --join-service-port <n>        joinservice port on control planes (default 30090)
  --log-file <file>              also write logs here (streamed to the CLI when init fails)
  --address <ip>                 SSH principal address instead of the interfaces (repeatable)
  --join-source-address <ip>     local address of join.API connections: the joinservice identifies
                                 a node by its source IP (local cluster nodes share one loopback)
  --init-system <s>              systemd: enable kubelet.service and reboot with systemctl;
                                 none: the node's supervisor starts the kubelet once kubeadm wrote
                                 its configuration in this boot or the bootstrapper wrote
                                 /run/asterism-start-kubelet (after a rejoin or recovery), and a
                                 reboot exits with code 3 (default systemd)
  --image-repository <repo>      kubeadm backend: registry prefix of the control-plane images
  --ignore-preflight-errors <l>  kubeadm backend: comma-separated kubeadm preflight checks to
                                 report as warnings (nodes that are containers, not VMs)
  --kube-proxy-conntrack-max-per-core <n>
                                 kubeadm backend: kube-proxy's conntrack.maxPerCore; 0 keeps the
                                 kernel's limit (needed when the node is a network namespace)
  --join-timeout <d>             deadline of a join's Kubernetes phase (installing the components,
                                 kubeadm join, all attempts) as a duration like 90s, 20m or 1h30m,
                                 between 1s and 24h; when it passes the node resets its state disk
                                 and reboots (default 5m; an emulated VM needs more)
  --recovery-port <n>            recoverproto.API port on --init-host while a rebooted node waits
                                 for its disk key, 0 = off (default 9999)
  --upgrade-agent-port <n>       stay resident after bootstrapping and serve the upgrade agent
                                 (upgradeagent.API over aTLS) on the node's address, 0 = off
                                 (default 0; the upgrade agent's port is 9777)
  -h, --help                     show this help`;

export { FlagError };

const OPTIONS = {
  v: { type: 'string' },
  'attestation-variant': { type: 'string' },
  csp: { type: 'string' },
  'state-root': { type: 'string' },
  tpm: { type: 'string' },
  'state-disk': { type: 'string' },
  'initial-key': { type: 'string' },
  'state-disk-pbkdf': { type: 'string' },
  'map-state-disk': { type: 'boolean' },
  metadata: { type: 'string' },
  'cloud-api-url': { type: 'string' },
  'node-name': { type: 'string' },
  'k8s-backend': { type: 'string' },
  'k8s-bin-dir': { type: 'string' },
  'init-host': { type: 'string' },
  'init-port': { type: 'string' },
  'join-service-port': { type: 'string' },
  'log-file': { type: 'string' },
  address: { type: 'string', multiple: true },
  'join-source-address': { type: 'string' },
  'init-system': { type: 'string' },
  'image-repository': { type: 'string' },
  'ignore-preflight-errors': { type: 'string' },
  'kube-proxy-conntrack-max-per-core': { type: 'string' },
  'join-timeout': { type: 'string' },
  'recovery-port': { type: 'string' },
  'upgrade-agent-port': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Raw flag values as parseArgs returns them (strings, unvalidated). */
type FlagValues = ReturnType<typeof readValues>;

function readValues(argv: string[]) {
  return parseGoFlags(argv, OPTIONS);
}

/** Parses argv (without node and script) and the environment; null = help requested. */
export function parseFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): BootstrapperConfig | null {
  const values = readValues(argv);
  if (values.help) return null;
  // Groups run in this order so the first invalid flag reported stays the same.
  const variant = attestationVariant(values['attestation-variant'] ?? env.CONSTEL_ATTESTATION_VARIANT);
  const backend = values['k8s-backend'] ?? 'kubeadm';
  if (backend !== 'kubeadm') throw new FlagError(`unknown --k8s-backend "${backend}": want kubeadm (simulated nodes run tools/simulated-node)`);
  const platform = cloudPlatform(values, env);
  const node = nodeSettings(values);
  return { verbosity: int('v', values.v, 0, -10, 10), variant, ...platform, ...node, ...ports(values), ...kubernetes(values) };
}

/** `--csp`, `--metadata` and `--cloud-api-url`, which must agree with each other. */
function cloudPlatform(values: FlagValues, env: NodeJS.ProcessEnv): Pick<BootstrapperConfig, 'csp' | 'metadata' | 'cloudApiUrl' | 'nodeName'> {
  const csp = values.csp ?? env.CONSTEL_CSP ?? 'QEMU';
  const cloud = parseCloudKind(csp);
  const metadata = values.metadata ?? (cloud ? '' : 'http://10.42.0.1:8080');
  if (metadata.startsWith('file:') && !values['node-name']) throw new FlagError('--node-name is required with a file: metadata source');
  if (!(cloud && metadata === '') && !/^(file:.+|https?:\/\/.+)$/.test(metadata)) throw new FlagError(`invalid --metadata "${metadata}": want file:<path> or an http(s) URL`);
  const cloudApiUrl = values['cloud-api-url'];
  if (cloudApiUrl !== undefined && (!cloud || !/^https?:\/\/\S+$/.test(cloudApiUrl))) throw new FlagError(`invalid --cloud-api-url "${cloudApiUrl}": want an http(s) URL, with --csp AWS, Azure or GCP`);
  return { csp, metadata, cloudApiUrl, nodeName: values['node-name'] };
}

/** The node's own devices and paths: state disk, TPM, init system, addresses. */
function nodeSettings(values: FlagValues) {
  const pbkdf = values['state-disk-pbkdf'] ?? 'light';
  if (!Object.hasOwn(STATE_DISK_PBKDF_PRESETS, pbkdf)) throw new FlagError(`unknown --state-disk-pbkdf "${pbkdf}": want ${Object.keys(STATE_DISK_PBKDF_PRESETS).join(' or ')}`);
  const initSystem = values['init-system'] ?? 'systemd';
  if (initSystem !== 'systemd' && initSystem !== 'none') throw new FlagError(`unknown --init-system "${initSystem}": want systemd or none`);
  const joinSource = values['join-source-address'];
  if (joinSource !== undefined && isIP(joinSource) === 0) throw new FlagError(`invalid --join-source-address "${joinSource}": want an IP address`);
  const tpm = tpmFlag(values.tpm);
  return {
    stateRoot: values['state-root'] ?? '/',
    tpm,
    stateDisk: values['state-disk'] ?? '/dev/mapper/state',
    initialKeyPath: values['initial-key'] ?? '/run/cryptsetup-keys.d/state.key',
    stateDiskPbkdf: pbkdf as StateDiskPbkdfPreset,
    mapStateDisk: values['map-state-disk'] ?? false,
    initSystem,
    addresses: values.address,
    joinSourceAddress: joinSource,
    logFile: values['log-file'],
  } satisfies Partial<BootstrapperConfig>;
}

/** init.API listen address and the service ports. */
function ports(values: FlagValues) {
  return {
    initHost: values['init-host'] ?? '0.0.0.0',
    initPort: int('init-port', values['init-port'], 9000, 0, 65535),
    joinServicePort: int('join-service-port', values['join-service-port'], 30090, 1, 65535),
  } satisfies Partial<BootstrapperConfig>;
}

/** kubeadm settings and the recovery port. */
function kubernetes(values: FlagValues) {
  const conntrack = values['kube-proxy-conntrack-max-per-core'];
  return {
    k8sBinDir: values['k8s-bin-dir'],
    imageRepository: values['image-repository'] || undefined,
    kubeProxyConntrackMaxPerCore: conntrack === undefined ? undefined : int('kube-proxy-conntrack-max-per-core', conntrack, 0, 0, 1 << 20),
    recoveryPort: int('recovery-port', values['recovery-port'], 9999, 0, 65535),
    upgradeAgentPort: int('upgrade-agent-port', values['upgrade-agent-port'], 0, 0, 65535),
    joinTimeoutMs: durationMs('join-timeout', values['join-timeout'], 5 * 60_000, 1000, 24 * 3_600_000),
    ignorePreflightErrors: (values['ignore-preflight-errors'] ?? '').split(',').map((s) => s.trim()).filter(Boolean),
  } satisfies Partial<BootstrapperConfig>;
}

const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go-style duration flag (`90s`, `20m`, `1h30m`) in ms within [min, max]; `fallback` when absent. */
export function durationMs(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const parts = [...raw.matchAll(/(\d+)(ms|s|m|h)/g)];
  if (!/^(\d+(ms|s|m|h))+$/.test(raw) || parts.length === 0) throw new FlagError(`invalid --${name} "${raw}": want a duration like 90s, 20m or 1h30m`);
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * DURATION_UNIT_MS[unit!]!, 0);
  if (ms < min || ms > max) throw new FlagError(`invalid --${name} "${raw}": must be between ${min / 1000}s and ${max / 3_600_000}h`);
  return ms;
}
