/**
 * The world of the join benchmark: a real control plane (tools/k8s-testenv) with the cluster
 * objects, a keyservice process and one joinservice process (qemu-vtpm) - two when a baseline ref
 * is given, the same service built from that ref, sharing keyservice and control plane - a pool of
 * swtpm instances, and the joining nodes (source addresses, metadata file, kubelet CSRs).
 */
import { spawn } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import * as k8s from '@kubernetes/client-node';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { randomBytes, sshCaFromSeed } from '@asterism/crypto';
import { setUpClusterObjects } from '@asterism/k8s-controlplane';
import { startTestControlPlane, type TestControlPlane } from '@asterism/k8s-testenv';
import { APP_NODE_FLAGS, bundleApp } from '@asterism/deploy';
import { ServiceProcess, WORKSPACE_ROOT } from '@asterism/testing';
import { startSwtpm, type Swtpm } from '@asterism/tpm/testing';
import { baselineCheckout } from './baseline.js';

x509.cryptoProvider.set(webcrypto as never);

/** One joinservice under test: this checkout's (`current`) or the baseline ref's, with one identity binding mode. */
export interface JoinTarget {
  /** `<build>` alone with one binding mode, else `<build>/<binding>` (e.g. `current/off`). */
  name: string;
  build: 'current' | 'baseline';
  identityBinding: 'strict' | 'off';
  /** 1-based replica number of this build and binding mode (join storms against several replicas). */
  replica: number;
  endpoint: string;
  pid: number;
}

/** Everything a block of joins needs; `stop()` ends every process it started. */
export interface JoinBenchEnv {
  targets: JoinTarget[];
  cp: TestControlPlane;
  issuers: QemuVtpmIssuer[];
  hostKey: Buffer;
  /** The joining nodes, one per source address; join i comes from `nodes[i % nodes.length]`. */
  nodes: BenchNode[];
  pids: { keyservice: number; apiserver: number; etcd: number; controllerManager: number };
  stop(): Promise<void>;
}

/** How the benchmark runs the services: `bundle` (as the images do: esbuild bundle + image Node flags) or `ts` (tsx). */
export type AppRuntime = 'bundle' | 'ts';

/**
 * Starts one app as production runs it (its bundle with the image's Node flags, deploy/) or from
 * its TypeScript sources; `nodeArgs` go before the entry point (e.g. `--cpu-prof`, which Node
 * refuses in NODE_OPTIONS). `root` is the checkout it is built from.
 */
async function startApp(app: 'keyservice' | 'joinservice', args: string[], o: { runtime: AppRuntime; root: string; outDir: string; nodeArgs: string[] }): Promise<ServiceProcess> {
  const entry =
    o.runtime === 'ts'
      ? ['--import', 'tsx', join(o.root, 'apps', app, 'src', 'main.ts')]
      : [...APP_NODE_FLAGS[app], (await bundleApp(app, { root: o.root, outRoot: o.outDir })).outfile];
  const child = spawn(process.execPath, [...o.nodeArgs, ...entry, ...args], { cwd: o.root, stdio: ['ignore', 'pipe', 'pipe'] });
  return new ServiceProcess(child);
}

/** Options of {@link startJoinBenchEnv}. */
export interface JoinBenchEnvOptions {
  tpms: number;
  runtime: AppRuntime;
  /** Node arguments of the joinservice process(es) (profiling). */
  joinserviceNodeArgs: string[];
  /** `--identity-binding` of the joinservice(s): `strict` (its default) and/or `off`; one process per mode and build. */
  identityBindings: ReadonlyArray<'strict' | 'off'>;
  /** A git ref: also run the joinservice as built from it (before/after in one run). */
  baselineRef?: string;
  /** Joining nodes (source addresses), default {@link DEFAULT_NODE_COUNT}. */
  nodes?: number;
  /** Processes of this checkout's joinservice per binding mode (replicas behind one address range). Default 1. */
  replicas?: number;
}

/** The files a joinservice reads: attestation config, measurement salt, kubeadm config, peers. */
async function joinserviceFiles(dir: string, nodeCount: number): Promise<{ configDir: string; kubeadmConfig: string; metadataFile: string; nodes: BenchNode[] }> {
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'attestationConfig'), '{"measurements":{}}');
  writeFileSync(join(configDir, 'measurementSalt'), randomBytes(32));
  const nodes = await benchNodes(nodeCount);
  const metadataFile = join(dir, 'metadata.json');
  writeMetadataFile(metadataFile, nodes);
  const kubeadmConfig = join(dir, 'ClusterConfiguration');
  writeFileSync(kubeadmConfig, 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  certSANs: ["203.0.113.9", "cluster.example"]\n');
  return { configDir, kubeadmConfig, metadataFile, nodes };
}

/** The joinservice's flags against the bench's control plane, keyservice and files. */
function joinserviceArgs(identityBinding: 'strict' | 'off', cp: Awaited<ReturnType<typeof startTestControlPlane>>, files: Awaited<ReturnType<typeof joinserviceFiles>>, keyservicePort: number): string[] {
  return [
    '--cloud-provider=qemu',
    '--attestation-variant=qemu-vtpm',
    `--key-service-endpoint=127.0.0.1:${keyservicePort}`,
    '--host=127.0.0.1',
    '--port=0',
    '--metrics-port=-1',
    `--config-dir=${files.configDir}`,
    `--kubeadm-config=${files.kubeadmConfig}`,
    `--kubernetes-dir=${join(cp.adminKubeconfigPath, '..')}`,
    `--kubeconfig=${cp.adminKubeconfigPath}`,
    `--api-server-endpoint=${cp.host}:${cp.port}`,
    '--rate-limit=100000',
    '--rate-burst=100000',
    `--identity-binding=${identityBinding}`,
    `--metadata-file=${files.metadataFile}`,
  ];
}

/** Starts control plane, keyservice, joinservice(s) and `tpms` swtpm instances. */
export async function startJoinBenchEnv(o: JoinBenchEnvOptions): Promise<JoinBenchEnv> {
  const cp = await startTestControlPlane();
  const started: ServiceProcess[] = [];
  const swtpms: Swtpm[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'join-bench-'));
  const baselineRoot = o.baselineRef ? baselineCheckout(o.baselineRef) : undefined;
  const stop = async () => {
    for (const p of started.reverse()) await p.stop();
    for (const t of swtpms) await t.stop();
    await cp.stop();
    for (const d of [dir, baselineRoot]) if (d) rmSync(d, { recursive: true, force: true });
  };
  try {
    const admin = new k8s.KubeConfig();
    admin.loadFromString(cp.adminKubeconfig);
    await setUpClusterObjects(admin, { components: [{ url: 'https://example.invalid/kubelet', hash: 'sha256:aa', installPath: '/run/state/bin/kubelet', extract: false }], kubernetesVersion: 'v1.34.4' });
    writeFileSync(join(dir, 'mastersecret'), randomBytes(32));
    writeFileSync(join(dir, 'salt'), randomBytes(32));
    const keyservice = await startApp('keyservice', ['--host=127.0.0.1', '--port=0', '--metrics-port=-1', `--master-secret=${join(dir, 'mastersecret')}`, `--salt=${join(dir, 'salt')}`], { runtime: o.runtime, root: WORKSPACE_ROOT, outDir: join(dir, 'dist'), nodeArgs: [] });
    started.push(keyservice);
    const ks = await keyservice.waitForLog((l) => l.msg === 'keyservice serving');
    const files = await joinserviceFiles(dir, o.nodes ?? DEFAULT_NODE_COUNT);
    const targets: JoinTarget[] = [];
    for (const [build, root] of [['current', WORKSPACE_ROOT], ...(baselineRoot ? [['baseline', baselineRoot]] : [])] as Array<[JoinTarget['build'], string]>) {
      const replicas = build === 'current' ? (o.replicas ?? 1) : 1;
      for (const binding of o.identityBindings) {
        for (let replica = 1; replica <= replicas; replica++) {
          const args = joinserviceArgs(binding, cp, files, ks.port as number);
          const joinservice = await startApp('joinservice', args, { runtime: o.runtime, root, outDir: join(dir, build), nodeArgs: o.joinserviceNodeArgs });
          started.push(joinservice);
          const js = await joinservice.waitForLog((l) => l.msg === 'joinservice serving', 60_000);
          const name = (o.identityBindings.length > 1 ? `${build}/${binding}` : build) + (replicas > 1 ? `#${replica}` : '');
          targets.push({ name, build, identityBinding: binding, replica, endpoint: `127.0.0.1:${js.port as number}`, pid: joinservice.child.pid! });
        }
      }
    }
    for (let i = 0; i < o.tpms; i++) swtpms.push(await startSwtpm());
    const pid = (name: string) => cp.processes.find((p) => p.name === name)!.child.pid!;
    return {
      targets,
      cp,
      issuers: swtpms.map((t) => new QemuVtpmIssuer(() => t.client())),
      hostKey: sshCaFromSeed(randomBytes(32)).publicWire,
      nodes: files.nodes,
      pids: { keyservice: keyservice.child.pid!, apiserver: pid('kube-apiserver'), etcd: pid('etcd'), controllerManager: pid('kube-controller-manager') },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The joining node behind one loopback source address (docs/adr/0008: the joinservice names peers by IP). */
export interface BenchNode {
  address: string;
  name: string;
  /** Kubelet CSR (DER) for `name`, made once and sent with every ticket of this node. */
  csr: Buffer;
}

/** Default number of nodes: source addresses 127.0.0.2-254, distinct peers as real nodes are (per-address aTLS admission, identity binding). */
export const DEFAULT_NODE_COUNT = 253;

/** Address and name of node `i`: 127.0.0.2-254 (`bench-node-<last octet>`), then 127.0.1.1-254, ... (`bench-node-<third>-<last>`). */
export function benchNodeAddress(i: number): { address: string; name: string } {
  if (i < 253) return { address: `127.0.0.${2 + i}`, name: `bench-node-${2 + i}` };
  const j = i - 253;
  const [third, last] = [1 + Math.floor(j / 254), 1 + (j % 254)];
  return { address: `127.0.${third}.${last}`, name: `bench-node-${third}-${last}` };
}

/** One node per source address, each with a kubelet CSR (one P-256 key for all). */
async function benchNodes(count: number): Promise<BenchNode[]> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, false, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const out: BenchNode[] = [];
  for (let i = 0; i < count; i++) {
    const { address, name } = benchNodeAddress(i);
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: `O=system:nodes, CN=system:node:${name}`,
      keys,
      signingAlgorithm: alg,
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: address }])],
    });
    out.push({ address, name, csr: Buffer.from(csr.rawData) });
  }
  return out;
}

/** The metadata file the joinservice looks peers up in (the local cluster's format, libs/metadata StaticFileMetadata). */
function writeMetadataFile(path: string, nodes: BenchNode[]): void {
  const instances = nodes.map((n) => ({ Name: n.name, ProviderID: `bench:///${n.name}`, Role: 'Worker', VPCIP: n.address, SecondaryIPRange: '', AliasIPRanges: null }));
  writeFileSync(path, JSON.stringify({ instances, loadBalancer: { host: '127.0.0.1', port: '6443' }, initSecretHash: 'unused', uid: 'bench' }));
}
