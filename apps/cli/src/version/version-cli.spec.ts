import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Variant } from '@asterism/attestation';
import { K8S_VERSION } from '@asterism/k8s-testenv';
import pkg from '../../package.json' with { type: 'json' };
import { UsageError } from '../usage.js';
import { gitCommit } from './build-info.js';
import { supportedKubernetesVersions } from './kubernetes-versions.js';
import { attestationVariants, formatVersion, versionCommand, type VersionReport } from './version-cli.js';

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await versionCommand(argv, { stdout: (s) => (out += s) });
  return { code, out };
}

describe('asterism version', () => {
  it('from the sources: the Kubernetes version the binaries are built from', async () => {
    assert.deepEqual(await supportedKubernetesVersions(), [K8S_VERSION]);
  });

  it('variants: every variant of libs/attestation but the test-only dummy, sorted', () => {
    const want = Variant.all().map(String).filter((v) => v !== 'dummy').sort();
    assert.deepEqual(attestationVariants(), want);
    assert.ok(want.includes('qemu-vtpm') && want.length === Variant.all().length - 1);
  });

  it('-o json: package version, this checkout\'s commit, build "source"', async () => {
    const { code, out } = await run(['-o', 'json']);
    assert.equal(code, 0);
    const r = JSON.parse(out) as VersionReport;
    assert.equal(r.version, pkg.version);
    assert.equal(r.build, 'source');
    assert.match(r.commit, /^([0-9a-f]{40}(-dirty)?|unknown)$/);
    assert.deepEqual(r.kubernetesVersions, [K8S_VERSION]);
  });

  it('text: one line per field', () => {
    const text = formatVersion({ version: '1.2.3', commit: 'a'.repeat(40), build: 'bundle', kubernetesVersions: ['v1.34.4', 'v1.33.8'], attestationVariants: ['qemu-tdx', 'qemu-vtpm'] });
    assert.equal(text, `asterism 1.2.3\ncommit:               ${'a'.repeat(40)}\nbuild:                bundle\nkubernetes versions:  v1.34.4, v1.33.8\nattestation variants: qemu-tdx, qemu-vtpm`);
  });

  it('bad flags: a usage error, nothing printed', async () => {
    let out = '';
    await assert.rejects(versionCommand(['-o', 'yaml'], { stdout: (s) => (out += s) }), (e: Error) => e instanceof UsageError && /unknown --output "yaml"/.test(e.message));
    await assert.rejects(versionCommand(['--commit'], { stdout: (s) => (out += s) }), (e: { code?: string }) => e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION');
    assert.equal(out, '');
  });

  it('outside a git checkout the commit is "unknown"', () => {
    const dir = mkdtempSync(join(tmpdir(), 'asterism-nogit-'));
    try {
      assert.equal(gitCommit(dir), 'unknown');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
