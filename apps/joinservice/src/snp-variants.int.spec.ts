/**
 * The joinservice process starts with each SEV-SNP variant (real control plane, keyservice
 * process) and serves: the certificate cache is filled from a local stand-in for AMD KDS
 * (`--amd-kds-url`, replaying the real Milan chains of testdata/), and the collateral counters
 * are exported. An unreachable KDS does not stop it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { defaultAttestationConfig, encodeAttestationConfig } from '@asterism/attestation';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { MEASUREMENT_SALT, startHarness, startJoinServiceProcess, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable();
const testdata = (p: string) => readFileSync(resolve(WORKSPACE_ROOT, 'testdata', p), 'utf8');

/** Serves the real KDS cert_chain answers of testdata/ (loopback); counts requests. */
async function fakeKds(): Promise<{ url: string; server: Server; requests: string[] }> {
  const chains: Record<string, string> = {
    '/vcek/v1/Milan/cert_chain': testdata('snp/certchain.pem'),
    '/vlek/v1/Milan/cert_chain': testdata('snp/vlekcertchain.pem'),
  };
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = chains[req.url ?? ''];
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'application/x-pem-file' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

describe('joinservice process with each SEV-SNP variant', { skip }, () => {
  /** Provider flags: the variant's cloud, with the API server endpoint given (no cloud metadata here). */
  const providerArgs = (provider: string, extra: string[]) => [`--cloud-provider=${provider}`, `--api-server-endpoint=${h.cp.host}:${h.cp.port}`, ...extra];
  let h: Harness;
  let kds: Awaited<ReturnType<typeof fakeKds>>;
  let core: k8s.CoreV1Api;

  before(async () => {
    h = await startHarness('dummy', '{"measurements":{}}');
    kds = await fakeKds();
    const kc = new k8s.KubeConfig();
    kc.loadFromString(h.cp.adminKubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });
  after(async () => {
    await h?.stop();
    kds?.server.close();
  });

  const cases = [
    { variant: 'azure-sev-snp', provider: 'azure', chain: '/vcek/v1/Milan/cert_chain', askCn: 'SEV-Milan' },
    { variant: 'aws-sev-snp', provider: 'aws', chain: '/vlek/v1/Milan/cert_chain', askCn: 'SEV-VLEK-Milan' },
    { variant: 'gcp-sev-snp', provider: 'gcp', chain: null, askCn: null },
  ] as const;

  for (const c of cases) {
    it(`${c.variant}: starts, fills the sev-snp-cert-cache from KDS where the variant uses it, serves and exports collateral counters`, async () => {
      await core.deleteNamespacedConfigMap({ name: 'sev-snp-cert-cache', namespace: 'kube-system' }).catch(() => undefined);
      const configDir = join(h.dir, `config-${c.variant}`);
      mkdirSync(configDir, { recursive: true });
      writeFileSync(join(configDir, 'attestationConfig'), encodeAttestationConfig(defaultAttestationConfig(c.variant)));
      writeFileSync(join(configDir, 'measurementSalt'), MEASUREMENT_SALT);
      const before = kds.requests.length;
      const { joinservice: js } = await startJoinServiceProcess(h, providerArgs(c.provider, [`--amd-kds-url=${kds.url}`]), c.variant, configDir);
      try {
        const serving = await js.waitForLog((l) => l.msg === 'joinservice serving');
        assert.equal(serving.variant, c.variant);
        const metrics = await (await fetch(`http://127.0.0.1:${serving.metricsPort as number}/metrics`)).text();
        assert.match(metrics, /# TYPE joinservice_collateral_lookups_total counter/);
        assert.match(metrics, /# TYPE joinservice_collateral_fetches_total counter/);
        if (c.chain) {
          assert.deepEqual(kds.requests.slice(before), [c.chain]);
          const cm = await core.readNamespacedConfigMap({ name: 'sev-snp-cert-cache', namespace: 'kube-system' });
          assert.match(cm.data?.['ask'] ?? '', /BEGIN CERTIFICATE/);
          assert.match(cm.data?.['ark'] ?? '', /BEGIN CERTIFICATE/);
        } else {
          assert.equal(kds.requests.length, before, 'gcp-sev-snp needs no certificate cache');
        }
      } finally {
        await js.stop();
      }
    });
  }

  it('azure-sev-snp with AMD KDS unreachable and an empty cache still starts (warning), instead of exiting', async () => {
    await core.deleteNamespacedConfigMap({ name: 'sev-snp-cert-cache', namespace: 'kube-system' }).catch(() => undefined);
    const configDir = join(h.dir, 'config-azure-sev-snp');
    const { joinservice: js } = await startJoinServiceProcess(h, providerArgs('azure', ['--amd-kds-url=http://127.0.0.1:9']), 'azure-sev-snp', configDir);
    try {
      await js.waitForLog((l) => l.msg === 'AMD KDS is unreachable and the certificate cache is empty; the ASK is fetched when a node first needs it');
    } finally {
      await js.stop();
    }
  });
});
