import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { imageInstallPath, parseImageInstallPath } from './image-path.js';
import { defaultKubernetesVersion, supportedKubernetesVersions, versionRow, VersionsError, wireComponents, type VersionRow } from './manifest.js';

const row = (v: string): VersionRow => ({
  kubernetesVersion: v,
  components: [
    { name: 'kubelet', path: `${v}/kubelet`, hash: `sha256:${'1'.repeat(64)}`, installPath: '/run/state/bin/kubelet', extract: false },
    { name: 'cni-plugins', path: `${v}/cni-plugins.tar.gz`, hash: `sha256:${'2'.repeat(64)}`, installPath: '/opt/cni/bin', extract: true },
  ],
  images: [],
});
const rows = [row('v1.35.4'), row('v1.9.0'), row('v1.34.4')];

describe('versions manifest', () => {
  it('picks a row with or without the v prefix', () => {
    assert.equal(versionRow('v1.34.4', rows).kubernetesVersion, 'v1.34.4');
    assert.equal(versionRow('1.34.4', rows).kubernetesVersion, 'v1.34.4');
  });

  it('refuses an unsupported version, listing the supported ones oldest first', () => {
    assert.throws(
      () => versionRow('v1.33.0', rows),
      (e: unknown) => e instanceof VersionsError && e.code === 'UNSUPPORTED_KUBERNETES_VERSION' && e.message === 'Kubernetes version "v1.33.0" is not supported; supported versions: v1.9.0, v1.34.4, v1.35.4',
    );
  });

  it('resolves component paths against an artifact base (with or without a trailing slash)', () => {
    const want = ['http://10.42.0.1:8080/a/v1.34.4/kubelet', 'http://10.42.0.1:8080/a/v1.34.4/cni-plugins.tar.gz'];
    assert.deepEqual(wireComponents(row('v1.34.4'), 'http://10.42.0.1:8080/a').map((c) => c.url), want);
    assert.deepEqual(wireComponents(row('v1.34.4'), 'http://10.42.0.1:8080/a/').map((c) => c.url), want);
    assert.deepEqual(wireComponents(row('v1.34.4'), 'file:///srv/artifacts')[1], { url: 'file:///srv/artifacts/v1.34.4/cni-plugins.tar.gz', hash: `sha256:${'2'.repeat(64)}`, installPath: '/opt/cni/bin', extract: true });
  });

  it('refuses artifact bases that are not http, https or file URLs', () => {
    assert.throws(() => wireComponents(row('v1.34.4'), 'ftp://h/'), (e: unknown) => e instanceof VersionsError && e.code === 'ARTIFACT_BASE_INVALID');
    assert.throws(() => wireComponents(row('v1.34.4'), 'not a url'), (e: unknown) => e instanceof VersionsError && e.code === 'ARTIFACT_BASE_INVALID');
  });

  it('the checked-in manifest: default is the newest, every row complete with sha256 hashes', () => {
    const all = supportedKubernetesVersions();
    assert.ok(all.length >= 2, `at least two versions, got ${all.join(', ')}`);
    assert.equal(defaultKubernetesVersion(), all[all.length - 1]);
    assert.equal(versionRow('').kubernetesVersion, all[all.length - 1]);
    for (const v of all) {
      const r = versionRow(v);
      assert.deepEqual(r.components.map((c) => c.name), ['kubelet', 'kubeadm', 'kubectl', 'crictl', 'cni-plugins']);
      for (const c of r.components) assert.match(c.hash, /^sha256:[0-9a-f]{64}$/);
      for (const c of r.components) assert.ok(c.path.startsWith(`${v}/`));
      // Every Kubernetes image with its archive (reproducible, docs/adr/0034) and both digests.
      assert.deepEqual(r.images.map((i) => i.name), ['pause', 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy']);
      for (const i of r.images) {
        for (const h of [i.digest, i.id, i.hash]) assert.match(h, /^sha256:[0-9a-f]{64}$/);
        assert.equal(i.path, `${v}/images/${i.name}.tar`);
        assert.deepEqual(parseImageInstallPath(imageInstallPath(i)), { ref: i.ref, digest: i.digest });
      }
    }
  });
});
