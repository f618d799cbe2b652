import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultKubernetesVersion, supportedKubernetesVersions, versionRow } from '@asterism/versions';
import { UsageError } from '../usage.js';
import { kubernetesComponents } from './init-cli.js';

describe('asterism init --kubernetes-version / --artifact-base-url', () => {
  it('defaults to the newest supported version; without a base URL no components are sent', () => {
    assert.deepEqual(kubernetesComponents(undefined, undefined), { kubernetesVersion: defaultKubernetesVersion(), components: [] });
  });

  it('picks the asked row and resolves every component against the base URL', () => {
    const oldest = supportedKubernetesVersions()[0]!;
    const got = kubernetesComponents(oldest, 'http://10.42.0.1:8099/');
    assert.equal(got.kubernetesVersion, oldest);
    const row = versionRow(oldest);
    assert.deepEqual(
      got.components,
      row.components.map((c) => ({ url: `http://10.42.0.1:8099/${c.path}`, hash: c.hash, installPath: c.installPath, extract: c.extract })),
    );
  });

  it('an unsupported version is a usage error listing the supported ones', () => {
    assert.throws(
      () => kubernetesComponents('v1.20.0', undefined),
      (e: unknown) => e instanceof UsageError && e.message.includes('"v1.20.0" is not supported') && e.message.includes(supportedKubernetesVersions().join(', ')),
    );
  });

  it('a base that is not an http, https or file URL is a usage error', () => {
    assert.throws(() => kubernetesComponents(undefined, 'ftp://mirror/'), UsageError);
  });
});
