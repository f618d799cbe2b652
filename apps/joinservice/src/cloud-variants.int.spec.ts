/**
 * The joinservice process starts with each cloud vTPM variant (azure-trustedlaunch with a
 * configured AK root, aws-nitro-tpm, gcp-sev-es) against the real control plane and keyservice
 * of the harness, and its aTLS gate then uses that variant's validator: a node attesting with
 * another variant (dummy) is refused before any key is fetched.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DummyIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import type { ServiceProcess } from '@asterism/testing';
import { call, joinRequest, keyserviceCalls, MEASUREMENT_SALT, startHarness, startJoinServiceProcess, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable();
const M = `{"0":{"expected":"${'00'.repeat(32)}","warnOnly":false}}`;
/** A self-signed P-256 root made with openssl, standing in for a configured AK root. */
function rootPem(dir: string): string {
  const key = join(dir, 'ak-root.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-subj', '/CN=test AK root', '-days', '30', '-out', `${key}.pem`]);
  return readFileSync(`${key}.pem`, 'utf8');
}

const VARIANTS: Array<[variant: string, provider: string, config: (dir: string) => string]> = [
  ['azure-trustedlaunch', 'azure', (dir) => JSON.stringify({ measurements: JSON.parse(M), akRootKey: rootPem(dir) })],
  ['aws-nitro-tpm', 'aws', () => `{"measurements":${M}}`],
  ['gcp-sev-es', 'gcp', () => `{"measurements":${M}}`],
];

describe('joinservice process with the cloud vTPM variants', { skip }, () => {
  let h: Harness;
  const started: ServiceProcess[] = [];
  before(async () => {
    h = await startHarness('dummy', '{"measurements":{}}');
  });
  after(async () => {
    for (const p of started) await p.stop();
    await h?.stop();
  });

  for (const [variant, provider, config] of VARIANTS) {
    it(`${variant}: starts with --cloud-provider=${provider} and refuses a node attesting as another variant`, async () => {
      const configDir = join(h.dir, `config-${variant}`);
      mkdirSync(configDir);
      writeFileSync(join(configDir, 'attestationConfig'), config(h.dir));
      writeFileSync(join(configDir, 'measurementSalt'), MEASUREMENT_SALT);
      const { joinservice, port } = await startJoinServiceProcess(h, provider, variant, configDir);
      started.push(joinservice);
      const before = await keyserviceCalls(h.keyserviceMetrics);
      const client = new joinApi.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ issuer: new DummyIssuer() }));
      try {
        const { err } = await call((cb) => client.issueJoinTicket(joinRequest(h.dir, `node-${provider}`), cb));
        assert.ok(err, 'a dummy-attested node must not get a ticket');
      } finally {
        client.close();
      }
      assert.equal(await keyserviceCalls(h.keyserviceMetrics), before, 'no key was fetched');
    });
  }
});
