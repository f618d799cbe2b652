import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { binDir, K8S_VERSION } from '@asterism/k8s-testenv';
import { defaultK8sBinDir, IMAGES_KUBERNETES_VERSION } from './images/k8s-binaries.js';

describe("the image builder's Kubernetes binaries folder (deploy's own setting)", () => {
  it('names the folder the build tool fills for its pinned version', () => {
    assert.equal(IMAGES_KUBERNETES_VERSION, K8S_VERSION);
    const env = { ...process.env, ASTERISM_K8S_BIN_DIR: '', K8S_TESTENV_BIN: '' };
    const saved = process.env.K8S_TESTENV_BIN;
    delete process.env.K8S_TESTENV_BIN;
    try {
      assert.equal(defaultK8sBinDir(env), binDir());
    } finally {
      if (saved !== undefined) process.env.K8S_TESTENV_BIN = saved;
    }
  });

  it('ASTERISM_K8S_BIN_DIR, then K8S_TESTENV_BIN, win', () => {
    assert.equal(defaultK8sBinDir({ ASTERISM_K8S_BIN_DIR: '/a', K8S_TESTENV_BIN: '/b' }), '/a');
    assert.equal(defaultK8sBinDir({ K8S_TESTENV_BIN: '/b' }), '/b');
    assert.equal(defaultK8sBinDir({ K8S_TESTENV_CACHE: '/c' }), '/c/v1.34.4-static/bin');
  });
});
