import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultKubernetesVersion, parseImageOverlay, supportedKubernetesVersions, versionRow, VersionsError } from '@asterism/versions';
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
      [
        ...row.components.map((c) => ({ url: `http://10.42.0.1:8099/${c.path}`, hash: c.hash, installPath: c.installPath, extract: c.extract })),
        ...row.images.map((i) => ({ url: `http://10.42.0.1:8099/${i.path}`, hash: i.hash, installPath: `/run/state/images/${i.ref}@${i.digest}`, extract: false })),
      ],
    );
  });

  it('an unsupported version is a usage error listing the supported ones', () => {
    assert.throws(
      () => kubernetesComponents('v1.20.0', undefined),
      (e: unknown) => e instanceof UsageError && e.message.includes('"v1.20.0" is not supported') && e.message.includes(supportedKubernetesVersions().join(', ')),
    );
  });

  it('appends the overlay\'s service images; an overlay without a base URL is a usage error', () => {
    const svc = { name: 'joinservice', ref: 'localhost/asterism/joinservice:0.1.0', digest: `sha256:${'1'.repeat(64)}`, id: `sha256:${'2'.repeat(64)}`, path: `services/${'3'.repeat(64)}.tar`, hash: `sha256:${'3'.repeat(64)}` };
    const overlay = parseImageOverlay(JSON.stringify({ images: [svc] }));
    const got = kubernetesComponents(undefined, 'http://10.42.0.1:8099/', overlay).components;
    assert.deepEqual(got[got.length - 1], { url: `http://10.42.0.1:8099/${svc.path}`, hash: svc.hash, installPath: `/run/state/images/${svc.ref}@${svc.digest}`, extract: false });
    assert.throws(() => kubernetesComponents(undefined, undefined, overlay), UsageError);
    assert.throws(() => parseImageOverlay(JSON.stringify({ images: [{ ...svc, path: '/etc/passwd' }] })), (e: unknown) => e instanceof VersionsError && e.code === 'IMAGE_OVERLAY_INVALID');
    assert.throws(() => parseImageOverlay(JSON.stringify({ images: [svc, svc] })), /named twice/);
  });

  it('a base that is not an http, https or file URL is a usage error', () => {
    assert.throws(() => kubernetesComponents(undefined, 'ftp://mirror/'), UsageError);
  });
});
