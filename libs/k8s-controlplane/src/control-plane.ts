import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { httpsGetText } from '@asterism/k8s';
import { buildKubeconfig } from './kubeconfig.js';
import { createControlPlanePki, type ControlPlanePki } from './pki.js';
import { freePort, ManagedProcess, waitFor } from './processes.js';

/** Where the control-plane binaries are (built by tools/k8s-testenv). */
export interface ControlPlaneBinaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
}

/** Options of a control plane on this machine. */
export interface ControlPlaneOptions {
  binaries: ControlPlaneBinaries;
  /** State folder: pki/, admin.conf, etcd data and logs. */
  dir: string;
  host?: string;
  /** API server port; 0 or unset = a free port. */
  apiServerPort?: number;
  /** Extra IPs/names in the API server certificate. */
  apiServerIps?: string[];
  serviceCidr?: string;
  /** Controllers of kube-controller-manager (default: the bootstrap-token and CSR ones). */
  controllers?: string[];
  startTimeoutMs?: number;
  /** Progress lines (e.g. console.error). */
  progress?: (line: string) => void;
}

/** A running etcd + kube-apiserver + kube-controller-manager. */
export interface RunningControlPlane {
  server: string;
  host: string;
  port: number;
  pki: ControlPlanePki;
  /** Admin kubeconfig (system:masters), written to `<dir>/admin.conf`. */
  adminKubeconfigPath: string;
  adminKubeconfig: string;
  processes: ManagedProcess[];
  /** Time from start() to /readyz, in ms. */
  startupMs: number;
  stop(): Promise<void>;
}

/** GET `path` on the API server with the admin client certificate; resolves the status code. */
export function adminGet(cp: { server: string; pki: ControlPlanePki }, path: string): Promise<{ status: number; body: string }> {
  return httpsGetText(new URL(path, cp.server), { ca: cp.pki.ca.certPem, cert: cp.pki.admin.certPem, key: cp.pki.admin.keyPem, timeoutMs: 5000 });
}

function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts a real Kubernetes control plane on loopback: throwaway PKI, etcd, kube-apiserver
 * (bootstrap-token auth, Node+RBAC authorizers, NodeRestriction) and kube-controller-manager
 * (bootstrapsigner, tokencleaner, csrsigning), waits for /readyz and returns an admin kubeconfig.
 * Used by integration tests and by the bootstrapper's `local` Kubernetes backend.
 */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<RunningControlPlane> {
  const started = Date.now();
  const host = opts.host ?? '127.0.0.1';
  const say = opts.progress ?? (() => undefined);
  await mkdir(join(opts.dir, 'logs'), { recursive: true });
  say('generating control-plane PKI');
  const pki = await createControlPlanePki(opts.dir, { apiServerIps: [host, ...(opts.apiServerIps ?? [])] });
  const processes: ManagedProcess[] = [];
  const stop = async () => {
    for (const p of [...processes].reverse()) await p.stop();
  };
  try {
    const ctx: StartContext = { opts, host, say, pki, processes };
    const etcdClient = await startEtcd(ctx);
    const { server, port } = await startApiServer(ctx, etcdClient);
    const { adminKubeconfig, adminKubeconfigPath, cmConfig } = await writeKubeconfigs(ctx, server);
    await startControllerManager(ctx, cmConfig);
    const startupMs = Date.now() - started;
    say(`control plane ready in ${(startupMs / 1000).toFixed(1)} s`);
    return { server, host, port, pki, adminKubeconfigPath, adminKubeconfig, processes, startupMs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** What the start stages of {@link startControlPlane} share. */
interface StartContext {
  opts: ControlPlaneOptions;
  host: string;
  say: (line: string) => void;
  pki: ControlPlanePki;
  /** Started processes, in start order (stopped in reverse on failure). */
  processes: ManagedProcess[];
}

/** Starts etcd on a free loopback port, waits for /health; resolves the client port. */
async function startEtcd({ opts, host, say, processes }: StartContext): Promise<number> {
  const etcdClient = await freePort(host);
  const etcdPeer = await freePort(host);
  const etcdLog = join(opts.dir, 'logs', 'etcd.log');
  say(`starting etcd on ${host}:${etcdClient}`);
  const etcd = ManagedProcess.start('etcd', opts.binaries.etcd, [
    '--name=asterism',
    `--data-dir=${join(opts.dir, 'etcd')}`,
    `--listen-client-urls=http://${host}:${etcdClient}`,
    `--advertise-client-urls=http://${host}:${etcdClient}`,
    `--listen-peer-urls=http://${host}:${etcdPeer}`,
    `--initial-advertise-peer-urls=http://${host}:${etcdPeer}`,
    `--initial-cluster=asterism=http://${host}:${etcdPeer}`,
    '--log-level=warn',
  ], etcdLog);
  processes.push(etcd);
  await waitFor(
    'etcd',
    async () => (await fetch(`http://${host}:${etcdClient}/health`)).ok,
    { timeoutMs: opts.startTimeoutMs ?? 60_000, alive: () => etcd.running, hint: () => tail(etcdLog) },
  );
  return etcdClient;
}

/** Starts kube-apiserver against etcd and waits for /readyz; resolves its URL and port. */
async function startApiServer({ opts, host, say, pki, processes }: StartContext, etcdClient: number): Promise<{ server: string; port: number }> {
  const port = opts.apiServerPort || (await freePort(host));
  const server = `https://${host}:${port}`;
  const apiLog = join(opts.dir, 'logs', 'kube-apiserver.log');
  say(`starting kube-apiserver on ${server}`);
  const p = (n: string) => pki.path(n);
  const apiserver = ManagedProcess.start('kube-apiserver', opts.binaries.kubeApiserver, [
    `--etcd-servers=http://${host}:${etcdClient}`,
    `--bind-address=${host}`,
    `--advertise-address=${host}`,
    `--secure-port=${port}`,
    `--tls-cert-file=${p('pki/apiserver.crt')}`,
    `--tls-private-key-file=${p('pki/apiserver.key')}`,
    `--client-ca-file=${p('pki/ca.crt')}`,
    `--service-account-key-file=${p('pki/sa.pub')}`,
    `--service-account-signing-key-file=${p('pki/sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    '--authorization-mode=Node,RBAC',
    '--enable-bootstrap-token-auth=true',
    '--enable-admission-plugins=NodeRestriction',
    `--service-cluster-ip-range=${opts.serviceCidr ?? '10.96.0.0/12'}`,
    '--allow-privileged=true',
    `--requestheader-client-ca-file=${p('pki/front-proxy-ca.crt')}`,
    `--proxy-client-cert-file=${p('pki/front-proxy-client.crt')}`,
    `--proxy-client-key-file=${p('pki/front-proxy-client.key')}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-username-headers=X-Remote-User',
    `--cert-dir=${join(opts.dir, 'apiserver-certs')}`,
    '--profiling=false',
    '--v=1',
  ], apiLog);
  processes.push(apiserver);
  const cp = { server, pki };
  await waitFor('kube-apiserver /readyz', async () => (await adminGet(cp, '/readyz')).status === 200, {
    timeoutMs: opts.startTimeoutMs ?? 90_000,
    alive: () => apiserver.running,
    hint: () => tail(apiLog),
  });
  return { server, port };
}

/** Writes `admin.conf` and `controller-manager.conf` (mode 0600) for `server`. */
async function writeKubeconfigs({ opts, pki }: StartContext, server: string): Promise<{ adminKubeconfig: string; adminKubeconfigPath: string; cmConfig: string }> {
  const adminKubeconfig = buildKubeconfig({ server, caPem: pki.ca.certPem, userName: 'kubernetes-admin', clientCertPem: pki.admin.certPem, clientKeyPem: pki.admin.keyPem });
  const adminKubeconfigPath = join(opts.dir, 'admin.conf');
  await writeFile(adminKubeconfigPath, adminKubeconfig, { mode: 0o600 });
  const cmConfig = join(opts.dir, 'controller-manager.conf');
  await writeFile(
    cmConfig,
    buildKubeconfig({ server, caPem: pki.ca.certPem, userName: 'system:kube-controller-manager', clientCertPem: pki.controllerManager.certPem, clientKeyPem: pki.controllerManager.keyPem }),
    { mode: 0o600 },
  );
  return { adminKubeconfig, adminKubeconfigPath, cmConfig };
}

/** Starts kube-controller-manager with `cmConfig`; throws if it exits right away. */
async function startControllerManager({ opts, host, say, pki, processes }: StartContext, cmConfig: string): Promise<void> {
  const p = (n: string) => pki.path(n);
  const cmLog = join(opts.dir, 'logs', 'kube-controller-manager.log');
  say('starting kube-controller-manager');
  const cm = ManagedProcess.start('kube-controller-manager', opts.binaries.kubeControllerManager, [
    `--kubeconfig=${cmConfig}`,
    `--authentication-kubeconfig=${cmConfig}`,
    `--authorization-kubeconfig=${cmConfig}`,
    `--controllers=${(opts.controllers ?? ['bootstrap-signer-controller', 'token-cleaner-controller', 'certificatesigningrequest-signing-controller', 'certificatesigningrequest-approving-controller', 'serviceaccount-token-controller', 'serviceaccount-controller', 'root-ca-certificate-publisher-controller']).join(',')}`,
    `--cluster-signing-cert-file=${p('pki/ca.crt')}`,
    `--cluster-signing-key-file=${p('pki/ca.key')}`,
    `--root-ca-file=${p('pki/ca.crt')}`,
    `--service-account-private-key-file=${p('pki/sa.key')}`,
    '--use-service-account-credentials=true',
    '--leader-elect=false',
    `--bind-address=${host}`,
    `--secure-port=${await freePort(host)}`,
    '--profiling=false',
    '--v=1',
  ], cmLog);
  processes.push(cm);
  // The controller manager has no readiness we need to wait for beyond starting; fail fast if it dies.
  await new Promise((r) => setTimeout(r, 300));
  if (!cm.running) throw new Error(`kube-controller-manager exited: ${tail(cmLog)}`);
}
