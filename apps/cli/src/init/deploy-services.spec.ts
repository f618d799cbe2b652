import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { DEFAULT_CHART_DIR } from './chart-location.js';
import { generatedValues, HelmServicesDeployer, ServicesDeployError, spawnHelm, type ServicesDeployment } from './deploy-services.js';

const deployment = (extra: Partial<ServicesDeployment> = {}): ServicesDeployment => ({
  kubeconfigPath: join(mkdtempSync(join(tmpdir(), 'kc-')), 'admin.conf'),
  masterSecret: { key: Buffer.alloc(32, 7), salt: Buffer.alloc(32, 9) },
  measurementSalt: Buffer.alloc(32, 1),
  attestationConfigJson: '{"measurements":{}}',
  variant: 'qemu-vtpm',
  csp: 'QEMU',
  imageRepository: 'localhost/asterism',
  valuesFiles: ['/tmp/user-values.yaml'],
  skipWait: false,
  timeoutSeconds: 60,
  ...extra,
});

/** A helm stand-in that records its calls and what the values file held while it ran. */
function recordingHelm(fail?: string) {
  const calls: string[][] = [];
  const values: Array<{ mode: number; body: Record<string, unknown>; path: string }> = [];
  return {
    calls,
    values,
    helm: async (args: string[]) => {
      calls.push(args);
      const i = args.indexOf('-f');
      if (i >= 0) values.push({ path: args[i + 1]!, mode: statSync(args[i + 1]!).mode & 0o777, body: parse(readFileSync(args[i + 1]!, 'utf8')) as Record<string, unknown> });
      if (fail && args[0] === fail) throw new Error('exit 1: Error: timed out waiting for the condition');
      return '';
    },
  };
}

describe('HelmServicesDeployer', () => {
  it('with the image overlay\'s digests, every service chart names its image by digest', () => {
    const digests = { joinservice: `sha256:${'1'.repeat(64)}`, keyservice: `sha256:${'2'.repeat(64)}`, 'verification-service': `sha256:${'3'.repeat(64)}`, 'attestation-monitor': `sha256:${'4'.repeat(64)}` };
    const v = generatedValues(deployment({ imageDigests: digests })) as Record<string, { image: { repository: string; digest?: string } }>;
    assert.deepEqual(v.joinservice!.image, { repository: 'localhost/asterism/joinservice', digest: digests.joinservice });
    assert.deepEqual(v.keyservice!.image, { repository: 'localhost/asterism/keyservice', digest: digests.keyservice });
    assert.deepEqual(v.verificationservice!.image, { repository: 'localhost/asterism/verification-service', digest: digests['verification-service'] });
    assert.deepEqual(v.attestationmonitor!.image, { repository: 'localhost/asterism/attestation-monitor', digest: digests['attestation-monitor'] });
  });

  it('writes join-config first, then installs the chart with the secrets only in a 0600 values file', async () => {
    const h = recordingHelm();
    const order: string[] = [];
    const d = new HelmServicesDeployer({ chartDir: DEFAULT_CHART_DIR, helm: async (a) => (order.push(a[0]!), h.helm(a)), progress: () => undefined, writeJoinConfig: async () => void order.push('join-config') });
    await d.deploy(deployment());
    assert.deepEqual(order, ['join-config', 'dependency', 'upgrade']);
    const install = h.calls[1]!;
    assert.deepEqual(install.slice(0, 6), ['upgrade', '--install', 'asterism', install[3], '--namespace', 'kube-system']);
    assert.ok(install.includes('--wait') && install.includes('--atomic'));
    assert.deepEqual(install.slice(install.lastIndexOf('-f') - 2, install.lastIndexOf('-f') + 2).slice(2), ['-f', '/tmp/user-values.yaml']);
    const secretB64 = Buffer.alloc(32, 7).toString('base64');
    assert.ok(!install.join(' ').includes(secretB64), 'the master secret is never a helm argument');
    assert.equal(h.values[0]!.mode, 0o600);
    assert.deepEqual(h.values[0]!.body, {
      joinservice: { image: { repository: 'localhost/asterism/joinservice' }, attestationVariant: 'qemu-vtpm', csp: 'QEMU' },
      keyservice: { image: { repository: 'localhost/asterism/keyservice' }, masterSecret: secretB64, salt: Buffer.alloc(32, 9).toString('base64') },
      verificationservice: { image: { repository: 'localhost/asterism/verification-service' }, attestationVariant: 'qemu-vtpm' },
      attestationmonitor: { image: { repository: 'localhost/asterism/attestation-monitor' }, attestationVariant: 'qemu-vtpm' },
    });
    assert.equal(existsSync(h.values[0]!.path), false, 'the values file is removed afterwards');
  });

  it('--skip-helm-wait installs without --wait/--atomic', async () => {
    const h = recordingHelm();
    await new HelmServicesDeployer({ chartDir: DEFAULT_CHART_DIR, helm: h.helm, progress: () => undefined, writeJoinConfig: async () => undefined }).deploy(deployment({ skipWait: true }));
    assert.ok(!h.calls[1]!.includes('--wait') && !h.calls[1]!.includes('--atomic'));
  });

  it('a helm failure is a typed error without the secret, and the values file is still removed', async () => {
    const h = recordingHelm('upgrade');
    const d = new HelmServicesDeployer({ chartDir: DEFAULT_CHART_DIR, helm: h.helm, progress: () => undefined, writeJoinConfig: async () => undefined });
    const err = await d.deploy(deployment()).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof ServicesDeployError);
    assert.equal(err.code, 'HELM_FAILED');
    assert.match(err.message, /timed out/);
    assert.ok(!err.message.includes(Buffer.alloc(32, 7).toString('base64')));
    assert.equal(existsSync(h.values[0]!.path), false);
  });

  it('a join-config failure stops before Helm', async () => {
    const h = recordingHelm();
    const d = new HelmServicesDeployer({ chartDir: DEFAULT_CHART_DIR, helm: h.helm, progress: () => undefined, writeJoinConfig: async () => Promise.reject(new Error('connection refused')) });
    await assert.rejects(d.deploy(deployment()), (e: unknown) => e instanceof ServicesDeployError && e.code === 'JOIN_CONFIG_FAILED');
    assert.equal(h.calls.length, 0);
  });
});

describe('spawnHelm (the helm runner over runCommand of @asterism/child-process)', () => {
  it('resolves with stdout and stderr interleaved; a failure names the exit code and the last lines', async () => {
    assert.equal(await spawnHelm('sh', 10_000)(['-c', 'echo a; sleep 0.05; echo b >&2']), 'a\nb\n');
    await assert.rejects(spawnHelm('sh', 10_000)(['-c', 'echo deploying; sleep 0.05; echo "Error: chart not found" >&2; exit 1']), /^Error: exit 1: deploying \| Error: chart not found$/);
  });

  it('a binary that cannot start and a run past the timeout are errors', async () => {
    await assert.rejects(spawnHelm('/nonexistent/helm', 10_000)(['version']), /^Error: cannot run \/nonexistent\/helm: spawn \/nonexistent\/helm ENOENT$/);
    await assert.rejects(spawnHelm('sleep', 50)(['5']), /^Error: exit null: $/);
  });
});
