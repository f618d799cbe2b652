import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { imageInstallPath } from './image-path.js';
import { INSTALL_PATHS } from './install-paths.js';
import { componentsForRole, isControlPlaneOnlyImage } from './node-roles.js';

const image = (ref: string) => ({ installPath: imageInstallPath({ ref, digest: `sha256:${'a'.repeat(64)}` }) });

describe('components by node role', () => {
  const list = [
    { installPath: `${INSTALL_PATHS.bin}/kubelet` },
    { installPath: `${INSTALL_PATHS.bin}/kubeadm` },
    { installPath: `${INSTALL_PATHS.bin}/kubectl` },
    { installPath: INSTALL_PATHS.cni },
    image('localhost/asterism/pause:3.10.1'),
    image('localhost/asterism/kube-proxy:v1.35.4'),
    image('localhost/asterism/etcd:3.6.6-0'),
    image('localhost/asterism/kube-apiserver:v1.35.4'),
    image('localhost/asterism/kube-controller-manager:v1.35.4'),
    image('localhost/asterism/kube-scheduler:v1.35.4'),
    image('localhost/asterism/joinservice:v0.1.0'),
    image('localhost/asterism/keyservice:v0.1.0'),
    image('localhost/asterism/attestation-monitor:v0.1.0'),
    image('localhost/asterism/verification-service:v0.1.0'),
  ];

  it('a worker keeps kubelet, kubeadm, CNI, pause, kube-proxy and the verification service; a control plane keeps everything', () => {
    const worker = componentsForRole(list, 'Worker').map((c) => c.installPath.split('/').pop()!.split(':')[0]);
    assert.deepEqual(worker, ['kubelet', 'kubeadm', 'bin', 'pause', 'kube-proxy', 'verification-service']);
    assert.equal(componentsForRole(list, 'ControlPlane').length, list.length);
  });

  it('matches the repository name, not a prefix or a tag; a non-image path is never control-plane-only', () => {
    assert.equal(isControlPlaneOnlyImage(image('localhost/asterism/etcd-backup:1').installPath), false);
    assert.equal(isControlPlaneOnlyImage(image('localhost/other/etcd:1').installPath), true);
    assert.equal(isControlPlaneOnlyImage(image('localhost/asterism/busybox:etcd').installPath), false);
    assert.equal(isControlPlaneOnlyImage(`${INSTALL_PATHS.bin}/etcd`), false);
  });
});
