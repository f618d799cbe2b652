import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { componentsConfigMapName, componentsHash, decodeComponents, encodeComponents } from './components.js';
import { K8sError } from './errors.js';

describe('component lists', () => {
  const list = [
    { url: 'https://example.invalid/kubeadm', hash: 'sha256:aa', installPath: '/run/state/bin/kubeadm', extract: false },
    { url: 'data:application/json;base64,e30=', hash: '', installPath: '/opt/kubernetes/patches/x.json', extract: false },
    { url: 'https://example.invalid/cni.tgz', hash: 'sha256:bb', installPath: '/opt/cni/bin', extract: true },
  ];

  it('encodes with omitempty keys', () => {
    assert.equal(
      encodeComponents(list),
      '[{"url":"https://example.invalid/kubeadm","hash":"sha256:aa","install_path":"/run/state/bin/kubeadm"},{"url":"data:application/json;base64,e30=","install_path":"/opt/kubernetes/patches/x.json"},{"url":"https://example.invalid/cni.tgz","hash":"sha256:bb","install_path":"/opt/cni/bin","extract":true}]',
    );
    assert.deepEqual(decodeComponents(encodeComponents(list)), list);
  });

  it('decodes the legacy form to the same list (TestUnmarshalComponents)', () => {
    const legacy = JSON.stringify(list.map((c) => ({ URL: c.url, Hash: c.hash, InstallPath: c.installPath, Extract: c.extract })));
    assert.deepEqual(decodeComponents(legacy), list);
  });

  it('hashes the hash strings in order and names the ConfigMap', () => {
    const expected = createHash('sha256').update('sha256:aasha256:bb').digest('hex');
    assert.equal(componentsHash(list), `sha256:${expected}`);
    assert.equal(componentsConfigMapName(list), `k8s-components-sha256-${expected}`);
  });

  for (const bad of ['{', '{}', '[1]', '[{"url":5}]', '[{"extract":"yes"}]']) {
    it(`rejects ${bad}`, () => assert.throws(() => decodeComponents(bad), K8sError));
  }
  it('treats null as an empty list', () => assert.deepEqual(decodeComponents('null'), []));
});
