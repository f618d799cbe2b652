/**
 * Acceptance of tools/k8s-testenv against the REAL kube-apiserver, etcd and controller manager:
 * bootstrap-token authentication, cluster-info JWS signatures by the bootstrapsigner, expiry and
 * clean-up by the tokencleaner, /readyz through kubectl, and no surviving processes.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { BootstrapTokenIssuer, bootstrapTokenSecret, formatBootstrapToken, generateBootstrapToken, JOIN_TOKEN_TTL_MS } from '@asterism/k8s';
import { eventually, kubectlBinary } from '@asterism/testing';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from './testenv.js';

const skip = testenvUnavailable();

/** Verifies a detached JWS (`header..signature`, HS256) over `payload` with `key`. */
function verifyDetachedJws(jws: string, payload: string, key: string): boolean {
  const [header, empty, signature] = jws.split('.');
  if (!header || empty !== '' || !signature) return false;
  const alg = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string };
  if (alg.alg !== 'HS256') return false;
  const mac = createHmac('sha256', key).update(`${header}.${Buffer.from(payload).toString('base64url')}`).digest('base64url');
  return mac === signature;
}

describe('k8s-testenv: a real control plane', { skip }, () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane();
  });
  after(async () => {
    const pids = cp?.processes.map((p) => p.child.pid!) ?? [];
    await cp?.stop();
    // No process may survive the control plane.
    for (const pid of pids) {
      let alive = true;
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
      assert.equal(alive, false, `process ${pid} survived stop()`);
    }
  });

  it('a joinservice-style bootstrap token authenticates as system:bootstrap:<id> and reads a signed cluster-info', async () => {
    const token = await new BootstrapTokenIssuer(cp.admin.core).create({ ttlMs: JOIN_TOKEN_TTL_MS });
    const asToken = cp.kubeconfigFor({ token: formatBootstrapToken(token) });
    const review = (await asToken.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })) as k8s.V1SelfSubjectReview;
    assert.equal(review.status?.userInfo?.username, `system:bootstrap:${token.id}`);
    assert.ok(review.status?.userInfo?.groups?.includes('system:bootstrappers:kubeadm:default-node-token'));

    const core = asToken.makeApiClient(k8s.CoreV1Api);
    const info = await eventually('the bootstrapsigner signature', async () => {
      const cm = await core.readNamespacedConfigMap({ name: 'cluster-info', namespace: 'kube-public' });
      return cm.data?.[`jws-kubeconfig-${token.id}`] ? cm : undefined;
    });
    assert.ok(verifyDetachedJws(info.data![`jws-kubeconfig-${token.id}`]!, info.data!.kubeconfig!, token.secret), 'JWS verifies with the token secret');
    assert.ok(!verifyDetachedJws(info.data![`jws-kubeconfig-${token.id}`]!, info.data!.kubeconfig!, 'x'.repeat(16)));
    // The token may read cluster-info but nothing else in kube-system.
    await assert.rejects(core.listNamespacedSecret({ namespace: 'kube-system' }), (e: { code?: number }) => e.code === 403);
  });

  it('rejects an expired token and the tokencleaner deletes it', async () => {
    const token = generateBootstrapToken();
    await cp.admin.core.createNamespacedSecret({ namespace: 'kube-system', body: bootstrapTokenSecret(token, { ttlMs: -60_000 }) });
    const core = cp.kubeconfigFor({ token: formatBootstrapToken(token) }).makeApiClient(k8s.CoreV1Api);
    await assert.rejects(core.readNamespacedConfigMap({ name: 'cluster-info', namespace: 'kube-public' }), (e: { code?: number }) => e.code === 401);
    await eventually('tokencleaner', async () => {
      try {
        await cp.admin.core.readNamespacedSecret({ name: `bootstrap-token-${token.id}`, namespace: 'kube-system' });
        return undefined;
      } catch (e) {
        return (e as { code?: number }).code === 404 ? true : undefined;
      }
    }, 60_000);
  });

  it('kubectl get --raw /readyz succeeds with the admin kubeconfig', () => {
    assert.equal(execFileSync(kubectlBinary(), ['--kubeconfig', cp.adminKubeconfigPath, 'get', '--raw', '/readyz']).toString().trim(), 'ok');
  });

  it('kubeadm validates a configuration against this version', () => {
    const out = spawnSync(cp.kubeadm, ['version', '-o', 'short']);
    assert.equal(out.status, 0);
    assert.match(out.stdout.toString(), /^v1\.34\./);
    const dir = mkdtempSync(join(tmpdir(), 'kubeadm-validate-'));
    try {
      const good = join(dir, 'good.yaml');
      writeFileSync(good, 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.34.4\n');
      const ok = spawnSync(cp.kubeadm, ['config', 'validate', '--config', good]);
      assert.equal(ok.status, 0, ok.stderr.toString());
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.34.4\nnetworkin: {}\n');
      const rejected = spawnSync(cp.kubeadm, ['config', 'validate', '--config', bad]);
      assert.notEqual(rejected.status, 0, 'a misspelled field is rejected');
      assert.match(rejected.stderr.toString(), /networkin/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
