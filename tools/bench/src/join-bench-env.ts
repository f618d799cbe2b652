/**
 * The world of the join benchmark: a real control plane (tools/k8s-testenv) with the cluster
 * objects, a keyservice process and a joinservice process (qemu-vtpm, started from the workspace
 * like the joinservice process tests), a pool of swtpm instances, and the request material
 * (kubelet CSRs, an SSH host key) made before a block starts.
 */
import { webcrypto } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import * as k8s from '@kubernetes/client-node';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { randomBytes, sshCaFromSeed } from '@asterism/crypto';
import { setUpClusterObjects } from '@asterism/k8s-controlplane';
import { startTestControlPlane, type TestControlPlane } from '@asterism/k8s-testenv';
import { startTsProcess, type ServiceProcess } from '@asterism/testing';
import { startSwtpm, type Swtpm } from '@asterism/tpm/testing';

x509.cryptoProvider.set(webcrypto as never);

/** Everything a block of joins needs; `stop()` ends every process it started. */
export interface JoinBenchEnv {
  endpoint: string;
  cp: TestControlPlane;
  issuers: QemuVtpmIssuer[];
  hostKey: Buffer;
  pids: { joinservice: number; keyservice: number; apiserver: number; etcd: number; controllerManager: number };
  stop(): Promise<void>;
}

/** Starts control plane, keyservice, joinservice and `tpms` swtpm instances. */
export async function startJoinBenchEnv(tpms: number): Promise<JoinBenchEnv> {
  const cp = await startTestControlPlane();
  const started: ServiceProcess[] = [];
  const swtpms: Swtpm[] = [];
  const stop = async () => {
    for (const p of started.reverse()) await p.stop();
    for (const t of swtpms) await t.stop();
    await cp.stop();
  };
  try {
    const admin = new k8s.KubeConfig();
    admin.loadFromString(cp.adminKubeconfig);
    await setUpClusterObjects(admin, { components: [{ url: 'https://example.invalid/kubelet', hash: 'sha256:aa', installPath: '/run/state/bin/kubelet', extract: false }], kubernetesVersion: 'v1.34.4' });
    const dir = mkdtempSync(join(tmpdir(), 'join-bench-'));
    writeFileSync(join(dir, 'mastersecret'), randomBytes(32));
    writeFileSync(join(dir, 'salt'), randomBytes(32));
    const keyservice = startTsProcess('apps/keyservice/src/main.ts', ['--host=127.0.0.1', '--port=0', '--metrics-port=-1', `--master-secret=${join(dir, 'mastersecret')}`, `--salt=${join(dir, 'salt')}`]);
    started.push(keyservice);
    const ks = await keyservice.waitForLog((l) => l.msg === 'keyservice serving');
    const configDir = join(dir, 'config');
    mkdirSync(configDir);
    writeFileSync(join(configDir, 'attestationConfig'), '{"measurements":{}}');
    writeFileSync(join(configDir, 'measurementSalt'), randomBytes(32));
    const kubeadmConfig = join(dir, 'ClusterConfiguration');
    writeFileSync(kubeadmConfig, 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  certSANs: ["203.0.113.9", "cluster.example"]\n');
    const joinservice = startTsProcess('apps/joinservice/src/main.ts', [
      '--cloud-provider=qemu',
      '--attestation-variant=qemu-vtpm',
      `--key-service-endpoint=127.0.0.1:${ks.port as number}`,
      '--host=127.0.0.1',
      '--port=0',
      '--metrics-port=-1',
      `--config-dir=${configDir}`,
      `--kubeadm-config=${kubeadmConfig}`,
      `--kubernetes-dir=${join(cp.adminKubeconfigPath, '..')}`,
      `--kubeconfig=${cp.adminKubeconfigPath}`,
      `--api-server-endpoint=${cp.host}:${cp.port}`,
      '--rate-limit=100000',
      '--rate-burst=100000',
    ], process.env.JOINSERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.JOINSERVICE_NODE_OPTIONS } : {});
    started.push(joinservice);
    const js = await joinservice.waitForLog((l) => l.msg === 'joinservice serving', 60_000);
    for (let i = 0; i < tpms; i++) swtpms.push(await startSwtpm());
    const pid = (name: string) => cp.processes.find((p) => p.name === name)!.child.pid!;
    return {
      endpoint: `127.0.0.1:${js.port as number}`,
      cp,
      issuers: swtpms.map((t) => new QemuVtpmIssuer(() => t.client())),
      hostKey: sshCaFromSeed(randomBytes(32)).publicWire,
      pids: { joinservice: joinservice.child.pid!, keyservice: keyservice.child.pid!, apiserver: pid('kube-apiserver'), etcd: pid('etcd'), controllerManager: pid('kube-controller-manager') },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `count` kubelet CSRs (DER) for node names `<prefix>-<i>`, one P-256 key for all. */
export async function kubeletCsrs(prefix: string, count: number): Promise<Buffer[]> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, false, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: `O=system:nodes, CN=system:node:${prefix}-${i}`,
      keys,
      signingAlgorithm: alg,
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '10.9.0.7' }])],
    });
    out.push(Buffer.from(csr.rawData));
  }
  return out;
}

/**
 * Makes every new TCP connection to `port` leave from its own loopback address (127.0.0.2-254,
 * round robin), as joining nodes do from their own IPs. Without it all joiners would share
 * 127.0.0.1 and the joinservice's per-address aTLS admission (docs/adr/0007: 20 handshakes/s per
 * address) would be what the benchmark measures. grpc-js opens its sockets with `net.connect`.
 */
export function spreadSourceAddresses(port: number): () => void {
  const original = net.connect;
  let next = 0;
  const patched = ((...args: unknown[]) => {
    const [first] = args;
    if (first && typeof first === 'object' && (first as net.TcpNetConnectOpts).port === port && !(first as net.TcpNetConnectOpts).localAddress) {
      args[0] = { ...(first as object), localAddress: `127.0.0.${2 + (next++ % 253)}` };
    }
    return (original as (...a: unknown[]) => net.Socket)(...args);
  }) as typeof net.connect;
  net.connect = patched;
  return () => {
    net.connect = original;
  };
}
