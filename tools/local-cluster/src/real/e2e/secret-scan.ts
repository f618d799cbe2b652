/**
 * The secret scan of the real-node suite (real-cluster.int.spec.ts): every log of the cluster
 * folder, of each node folder and below each node's /var/log (pod logs included), and every status
 * file, searched for the master secret and salt, the measurement secret, the init secret, each
 * node's disk key and kubelet private key, and the bootstrap-token secrets.
 */
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataKeyInfo, MEASUREMENT_SECRET_KEY_ID } from '@asterism/crypto';
import { findSecretLeaks, type NamedSecret } from '@asterism/testing';
import type { RealClusterContext } from './context.js';

/** Scans; `joined` nodes contribute their keys, `all` nodes their files. */
export async function noSecretInLogs(ctx: RealClusterContext, joined: string[], all: string[]): Promise<void> {
  const { layout, root } = ctx;
  const master = ctx.masterSecret();
  const secrets: NamedSecret[] = [
    { name: 'master secret', value: master.key },
    { name: 'master salt', value: master.salt },
    { name: 'measurement secret', value: ctx.kms().getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32) },
    { name: 'init secret', value: readFileSync(layout.initSecretFile, 'utf8').trim() },
  ];
  for (const n of joined) {
    secrets.push({ name: `${n} state disk key`, value: ctx.diskKey(n) });
    const pem = readFileSync(join(layout.nodeRoot(n), 'run/state/kubelet/pki/kubelet-client-key.pem'), 'utf8');
    secrets.push({ name: `${n} kubelet key`, value: Buffer.from(createPrivateKey(pem).export({ format: 'jwk' }).d!, 'base64url') });
  }
  const tokens = (await ctx.core.listNamespacedSecret({ namespace: 'kube-system', fieldSelector: 'type=bootstrap.kubernetes.io/token' })).items;
  assert.ok(tokens.length > 0, 'the joins left bootstrap tokens to look for');
  for (const t of tokens) secrets.push({ name: 'bootstrap token secret', value: Buffer.from(t.data!['token-secret']!, 'base64').toString() });
  const logs = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.log')).map((f) => join(dir, f));
  const files = [
    ...logs(root),
    ...all.flatMap((n) => [
      ...logs(layout.nodeDir(n)),
      ...(readdirSync(join(layout.nodeRoot(n), 'var/log'), { recursive: true }) as string[]).filter((f) => f.endsWith('.log')).map((f) => join(layout.nodeRoot(n), 'var/log', f)),
      layout.nodeStatus(n),
    ]),
  ].filter((f) => existsSync(f));
  assert.ok(files.some((f) => f.includes('/var/log/pods/kube-system_join-service')), 'pod logs are scanned');
  const leaks = files.flatMap((f) => findSecretLeaks(readFileSync(f, 'latin1'), secrets).map((l) => `${l} in ${f.slice(root.length + 1)}`));
  assert.deepEqual(leaks, []);
  const clusterId = Buffer.from((JSON.parse(readFileSync(join(layout.workspace, 'asterism-id.json'), 'utf8')) as { clusterID: string }).clusterID, 'base64');
  assert.ok(files.some((f) => findSecretLeaks(readFileSync(f, 'latin1'), [{ name: 'cluster ID', value: clusterId }]).length > 0), 'the scan sees the logs: the public cluster ID is found');
}

