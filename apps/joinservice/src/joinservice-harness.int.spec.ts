/**
 * Test harness for joinservice process tests (a spec file without tests, so it may use the
 * tool projects): a real control plane with the cluster objects, a keyservice process and a
 * joinservice process, plus request builders made with independent tools (openssl, ssh-keygen).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { parseAuthorizedKeyLine } from '@asterism/crypto';
import { setUpClusterObjects } from '@asterism/k8s-controlplane';
import { startTestControlPlane, type TestControlPlane } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { startTsProcess, type ServiceProcess } from '@asterism/testing';

export const DISK_UUID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
export const MASTER = Buffer.alloc(32, 0x11);
export const SALT = Buffer.alloc(32, 0x22);
export const MEASUREMENT_SALT = Buffer.alloc(32, 0x33);

export interface Harness {
  cp: TestControlPlane;
  dir: string;
  keyservice: ServiceProcess;
  keyserviceMetrics: number;
  /** host:port of the keyservice (for additional joinservice processes). */
  keyserviceEndpoint: string;
  joinservice: ServiceProcess;
  endpoint: string;
  configDir: string;
  /** Starts one more joinservice with the same config but other provider flags (e.g. `--csp=aws ...`). */
  startJoinservice(providerArgs: string[], env?: NodeJS.ProcessEnv): Promise<{ process: ServiceProcess; endpoint: string }>;
  stop(): Promise<void>;
}

/**
 * Starts control plane, cluster objects, keyservice and joinservice (variant + attestation config
 * given; `extraArgs` are appended to the joinservice's flags, e.g. `--identity-binding=off`).
 */
export async function startHarness(variant: string, attestationConfig: string, extraArgs: string[] = []): Promise<Harness> {
  const cp = await startTestControlPlane();
  const admin = new k8s.KubeConfig();
  admin.loadFromString(cp.adminKubeconfig);
  await setUpClusterObjects(admin, { components: [{ url: 'https://example.invalid/kubelet', hash: 'sha256:aa', installPath: '/run/state/bin/kubelet', extract: false }], kubernetesVersion: 'v1.34.4' });
  const dir = mkdtempSync(join(tmpdir(), 'joinservice-int-'));
  writeFileSync(join(dir, 'mastersecret'), MASTER);
  writeFileSync(join(dir, 'salt'), SALT);
  const keyservice = startTsProcess('apps/keyservice/src/main.ts', ['--host=127.0.0.1', '--port=0', '--metrics-port=0', `--master-secret=${join(dir, 'mastersecret')}`, `--salt=${join(dir, 'salt')}`, '-v=-1']);
  const ks = await keyservice.waitForLog((l) => l.msg === 'keyservice serving');
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'attestationConfig'), attestationConfig);
  writeFileSync(join(configDir, 'measurementSalt'), MEASUREMENT_SALT);
  const keyserviceEndpoint = `127.0.0.1:${ks.port as number}`;
  const { joinservice, port } = await startJoinServiceProcess({ cp, dir, keyserviceEndpoint }, 'qemu', variant, configDir, {}, extraArgs);
  const extra: ServiceProcess[] = [];
  return {
    cp,
    dir,
    keyservice,
    keyserviceMetrics: ks.metricsPort as number,
    keyserviceEndpoint,
    joinservice,
    endpoint: `127.0.0.1:${port}`,
    configDir,
    async startJoinservice(providerArgs, env = {}) {
      const started = await startJoinServiceProcess({ cp, dir, keyserviceEndpoint }, providerArgs, variant, configDir, env);
      extra.push(started.joinservice);
      return { process: started.joinservice, endpoint: `127.0.0.1:${started.port}` };
    },
    async stop() {
      for (const p of extra) await p.stop();
      await joinservice.stop();
      await keyservice.stop();
      await cp.stop();
    },
  };
}

/**
 * Starts a joinservice process against the harness's control plane and keyservice with a
 * `configDir` holding `attestationConfig` and `measurementSalt`; resolves once it serves.
 * `provider` is a cloud provider name (the API server endpoint is then the harness's) or the
 * complete provider flags (e.g. `--csp=aws --metadata-url=...`).
 */
export async function startJoinServiceProcess(
  h: Pick<Harness, 'cp' | 'dir' | 'keyserviceEndpoint'>,
  provider: string | string[],
  variant: string,
  configDir: string,
  env: NodeJS.ProcessEnv = {},
  extraArgs: string[] = [],
): Promise<{ joinservice: ServiceProcess; port: number }> {
  const providerArgs = typeof provider === 'string' ? [`--cloud-provider=${provider}`, `--api-server-endpoint=${h.cp.host}:${h.cp.port}`] : provider;
  const kubeadmConfig = join(h.dir, 'ClusterConfiguration');
  writeFileSync(kubeadmConfig, 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  certSANs: ["203.0.113.9", "cluster.example"]\n');
  const joinservice = startTsProcess('apps/joinservice/src/main.ts', [
    ...providerArgs,
    `--attestation-variant=${variant}`,
    `--key-service-endpoint=${h.keyserviceEndpoint}`,
    '--host=127.0.0.1',
    '--port=0',
    '--metrics-port=0',
    `--config-dir=${configDir}`,
    `--kubeadm-config=${kubeadmConfig}`,
    `--kubernetes-dir=${join(h.cp.adminKubeconfigPath, '..')}`,
    `--kubeconfig=${h.cp.adminKubeconfigPath}`,
    '--rate-limit=1000',
    '--rate-burst=1000',
    ...extraArgs,
  ], env);
  const js = await joinservice.waitForLog((l) => l.msg === 'joinservice serving', 60_000);
  return { joinservice, port: js.port as number };
}

/** GetDataKey calls the keyservice has answered so far (its own Prometheus counter). */
export async function keyserviceCalls(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return [...text.matchAll(/^keyservice_grpc_server_handled_total\{[^}]*GetDataKey[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

let requestCount = 0;

/** A join request made with independent tools: openssl CSR, ssh-keygen host key. */
export function joinRequest(dir: string, node: string, opts: { controlPlane?: boolean; subject?: string; diskUuid?: string } = {}): joinApi.IssueJoinTicketRequest {
  // A fresh key per request (the same node may ask several times).
  const key = join(dir, `${node}-${++requestCount}.key`);
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  execFileSync('openssl', ['req', '-new', '-key', key, '-subj', opts.subject ?? `/O=system:nodes/CN=system:node:${node}`, '-addext', 'subjectAltName=IP:10.9.0.7', '-outform', 'DER', '-out', `${key}.csr`]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', `${key}.ssh`]);
  return {
    diskUuid: opts.diskUuid ?? DISK_UUID,
    certificateRequest: readFileSync(`${key}.csr`),
    isControlPlane: opts.controlPlane ?? false,
    hostPublicKey: parseAuthorizedKeyLine(readFileSync(`${key}.ssh.pub`, 'utf8')),
    hostCertificatePrincipals: ['10.9.0.7', node],
  };
}

export function call<Res>(fn: (cb: (err: grpc.ServiceError | null, res?: Res) => void) => void): Promise<{ err: grpc.ServiceError | null; res?: Res }> {
  return new Promise((resolve) => fn((err, res) => resolve({ err, ...(res ? { res } : {}) })));
}

