/**
 * The joinservice process starts with each cloud vTPM variant (azure-trustedlaunch with a
 * configured AK root, aws-nitro-tpm, gcp-sev-es) against the real control plane and keyservice
 * of the harness, and its aTLS gate then uses that variant's validator: a node attesting with
 * another variant (dummy) is refused before any key is fetched. For azure-trustedlaunch a node
 * on a swtpm provisioned like an Azure vTPM (tpm2-tools: AK persisted at 0x81000003, an
 * openssl-made AK certificate in NV 0x01C101D0 chained to the configured root) gets a ticket.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { missingComponent, type ServiceProcess } from '@asterism/testing';
import { AZURE_AK_CERT_NV_INDEX, AzureTrustedLaunchIssuer, DummyIssuer, httpCertificateFetcher } from '@asterism/attestation';
import { publicKeyObject } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, tpm2ToolsAvailable } from '@asterism/tpm/testing';
import { call, joinRequest, keyserviceCalls, MEASUREMENT_SALT, startHarness, startJoinServiceProcess, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable();
const tpmSkip = skip || (!swtpmAvailable() ? missingComponent('swtpm', SWTPM_INSTALL_HINT) : !tpm2ToolsAvailable() ? missingComponent('tpm2-tools', SWTPM_INSTALL_HINT) : false);
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

  it('azure-trustedlaunch: a node on an Azure-provisioned swtpm attests and gets a ticket', { skip: tpmSkip }, async () => {
    const tpm = await startSwtpm();
    const caServer = createServer();
    try {
      const dir = join(h.dir, 'tl');
      mkdirSync(dir);
      const f = (n: string) => join(dir, n);
      const tools = (cmd: string, args: string[]) => execFileSync(cmd, args, { env: { ...process.env, TPM2TOOLS_TCTI: tpm.tcti }, stdio: 'pipe' });
      await tpm.disconnect();
      tools('tpm2_createprimary', ['-C', 'o', '-G', 'rsa2048:rsassa-sha256:null', '-a', 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign', '-c', f('ak.ctx')]);
      tools('tpm2_evictcontrol', ['-C', 'o', '-c', f('ak.ctx'), '0x81000003']);
      tools('tpm2_flushcontext', ['-t']);
      const akPub = await (await tpm.client()).readPublic(0x81000003);
      await tpm.disconnect();
      writeFileSync(f('ak.pub.pem'), publicKeyObject(akPub.public).export({ type: 'spki', format: 'pem' }));
      // The CA is served where the AK certificate's CA Issuers URL points.
      await new Promise<void>((r) => caServer.listen(0, '127.0.0.1', r));
      const caUrl = `http://127.0.0.1:${(caServer.address() as AddressInfo).port}/ca.crt`;
      const rootPemText = rootPem(dir);
      const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
      writeFileSync(f('ca.ext'), 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n');
      writeFileSync(f('ak.ext'), `keyUsage=critical,digitalSignature\nauthorityInfoAccess=caIssuers;URI:${caUrl}\n`);
      openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', f('ca.key'), '-subj', '/CN=test vTPM CA', '-out', f('ca.csr')]);
      openssl(['x509', '-req', '-in', f('ca.csr'), '-CA', f('ak-root.key.pem'), '-CAkey', f('ak-root.key'), '-set_serial', '2', '-days', '30', '-extfile', f('ca.ext'), '-outform', 'DER', '-out', f('ca.der')]);
      openssl(['x509', '-in', f('ca.der'), '-inform', 'DER', '-out', f('ca.pem')]);
      openssl(['x509', '-req', '-in', f('ca.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-force_pubkey', f('ak.pub.pem'), '-set_serial', '3', '-days', '30', '-extfile', f('ak.ext'), '-outform', 'DER', '-out', f('ak.der')]);
      const caDer = readFileSync(f('ca.der'));
      caServer.on('request', (_req, res) => res.writeHead(200, { 'content-type': 'application/pkix-cert' }).end(caDer));
      const akDer = readFileSync(f('ak.der'));
      tools('tpm2_nvdefine', [`0x${AZURE_AK_CERT_NV_INDEX.toString(16)}`, '-C', 'o', '-s', String(akDer.length), '-a', 'ownerread|ownerwrite|authread|authwrite']);
      tools('tpm2_nvwrite', [`0x${AZURE_AK_CERT_NV_INDEX.toString(16)}`, '-C', 'o', '-i', f('ak.der')]);
      // The joinservice trusts exactly this root (PCR 0 of a fresh swtpm is all zero, as M enforces).
      const configDir = join(dir, 'config');
      mkdirSync(configDir);
      writeFileSync(join(configDir, 'attestationConfig'), JSON.stringify({ measurements: JSON.parse(M), akRootKey: rootPemText }));
      writeFileSync(join(configDir, 'measurementSalt'), MEASUREMENT_SALT);
      // The joining "node" connects from 127.0.0.1, which no Azure metadata names: identity
      // binding is not the subject here (identity-binding.int.spec.ts), so the reference behaviour.
      const { joinservice, port } = await startJoinServiceProcess(h, 'azure', 'azure-trustedlaunch', configDir, {}, ['--identity-binding=off']);
      started.push(joinservice);
      const issuer = new AzureTrustedLaunchIssuer(() => tpm.client(), { fetchCertificate: httpCertificateFetcher() });
      const client = new joinApi.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ issuer }));
      try {
        const { err, res } = await call<joinApi.IssueJoinTicketResponse>((cb) => client.issueJoinTicket(joinRequest(h.dir, 'tl-node'), cb));
        assert.equal(err, null, err?.details);
        assert.equal(res!.stateDiskKey.length, 32);
      } finally {
        client.close();
      }
    } finally {
      caServer.close();
      await tpm.stop();
    }
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
