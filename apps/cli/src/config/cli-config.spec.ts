import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadCliConfig, parseCliConfig } from './cli-config.js';

describe('CLI config file', () => {
  it('parses every key and resolves paths against the config folder', () => {
    const cfg = parseCliConfig(
      'clusterName: demo\nkubernetesVersion: v1.34.4\napiServerCertSANs: [a.example]\nserviceCIDR: 10.96.0.0/12\ninitSecretFile: secret\nattestation:\n  variant: qemu-vtpm\n  configFile: att.json\n',
      '/etc/asterism/asterism-conf.yaml',
    );
    assert.deepEqual(cfg, {
      clusterName: 'demo',
      kubernetesVersion: 'v1.34.4',
      apiServerCertSANs: ['a.example'],
      serviceCIDR: '10.96.0.0/12',
      initSecretFile: '/etc/asterism/secret',
      attestation: { variant: 'qemu-vtpm', configFile: '/etc/asterism/att.json' },
    });
  });

  it('names a misspelled key', () => {
    assert.throws(() => parseCliConfig('clustername: x\n', '/c.yaml'), (e: unknown) => e instanceof ConfigError && /unknown key "clustername"/.test(e.message));
    assert.throws(() => parseCliConfig('attestation:\n  varient: x\n', '/c.yaml'), /unknown key "attestation.varient"/);
  });

  it('rejects wrong types and broken YAML', () => {
    assert.throws(() => parseCliConfig('clusterName: [1]\n', '/c.yaml'), /"clusterName" must be a string/);
    assert.throws(() => parseCliConfig('apiServerCertSANs: x\n', '/c.yaml'), /must be a list of strings/);
    assert.throws(() => parseCliConfig('a: [\n', '/c.yaml'), /not valid YAML/);
  });

  it('a missing default file is empty, a missing explicit file is an error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clicfg-'));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.deepEqual(await loadCliConfig(undefined), {});
      await assert.rejects(loadCliConfig(join(dir, 'nope.yaml')), (e: unknown) => e instanceof ConfigError && e.code === 'CONFIG_MISSING');
      writeFileSync(join(dir, 'asterism-conf.yaml'), 'clusterName: here\n');
      assert.equal((await loadCliConfig(undefined)).clusterName, 'here');
    } finally {
      process.chdir(cwd);
    }
  });
});
