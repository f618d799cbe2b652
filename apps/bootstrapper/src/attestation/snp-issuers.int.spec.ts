/**
 * The bootstrapper's SEV-SNP issuers on swtpm with the node's interfaces where the flags put
 * them: configfs-tsm under --state-root (a directory that behaves like configfs-tsm, replaying
 * the recorded VLEK report and a certificate table) and the GCE metadata server at --metadata (a
 * local server). The documents carry exactly the replayed bytes and the local metadata.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CERT_TABLE_GUID, CONFIGFS_TSM_REPORT_DIR, decodeDocument, decodeSnpInstanceInfo, encodeCertTable, GCE_AK_TEMPLATE_NV_INDEX_RSA, parseCertTable } from '@asterism/attestation';
import { FakeConfigfsTsm, replayFirmware } from '@asterism/attestation/testing';
import { missingComponent, WORKSPACE_ROOT } from '@asterism/testing';
import { akTemplateRsa, encodePublic } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, tpm2ToolsAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { Variant } from '@asterism/attestation';
import type { TpmClient } from '@asterism/tpm';
import { issuerFor, type NodeInterfaces } from '@asterism/node-platform';

/** The issuer the bootstrapper builds for an SEV-SNP variant (the variant table's issuer factory). */
const snpIssuerFor = (variant: string, openTpm: () => Promise<TpmClient>, node: NodeInterfaces = { stateRoot: '/' }) => issuerFor(Variant.fromString(variant), openTpm, async () => Buffer.alloc(0), node);

const skip = swtpmAvailable() && tpm2ToolsAvailable() ? false : missingComponent('swtpm + tpm2-tools', SWTPM_INSTALL_HINT);
const run = promisify(execFile);
const testdata = (p: string) => readFileSync(join(WORKSPACE_ROOT, 'testdata', p));
/** The recorded firmware answer: the real VLEK-signed report and a certificate table carrying its VLEK. */
const vlekReport = Buffer.from(testdata('snp/report-vlek.hex').toString('utf8').trim(), 'hex');
const vlekDer = Buffer.from(testdata('snp/vlek.pem').toString('utf8').replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
const recorded = { report: vlekReport, certTable: encodeCertTable([[CERT_TABLE_GUID.vlek, vlekDer]]) };

describe('bootstrapper SEV-SNP issuers: configfs-tsm under --state-root, metadata at --metadata', { skip }, () => {
  let tpm: Swtpm;
  let root: string;
  let metadata: Server;
  let metadataUrl = '';
  const metadataHits: string[] = [];

  before(async () => {
    tpm = await startSwtpm();
    root = mkdtempSync(join(tmpdir(), 'bootstrapper-snp-'));
    // GCE keeps the AK template in NV; the GCP issuer creates its AK from it.
    const file = join(root, 'ak-template.bin');
    const template = encodePublic(akTemplateRsa());
    writeFileSync(file, template);
    await tpm.disconnect();
    const env = { ...process.env, TPM2TOOLS_TCTI: tpm.tcti };
    const hex = `0x${GCE_AK_TEMPLATE_NV_INDEX_RSA.toString(16)}`;
    await run('tpm2_nvdefine', [hex, '-C', 'o', '-s', String(template.length), '-a', 'ownerread|ownerwrite|authread|authwrite'], { env });
    await run('tpm2_nvwrite', [hex, '-C', 'o', '-i', file], { env });
    metadata = createServer((req, res) => {
      metadataHits.push(req.url ?? '');
      const answers: Record<string, string> = {
        '/computeMetadata/v1/project/project-id': 'asterism-node-root\n',
        '/computeMetadata/v1/instance/zone': 'projects/42/zones/europe-west3-b',
        '/computeMetadata/v1/instance/name': 'snp-node',
      };
      const body = req.headers['metadata-flavor'] === 'Google' ? answers[req.url ?? ''] : undefined;
      res.writeHead(body === undefined ? 404 : 200).end(body ?? 'not found');
    });
    await new Promise<void>((r) => metadata.listen(0, '127.0.0.1', r));
    metadataUrl = `http://127.0.0.1:${(metadata.address() as AddressInfo).port}`;
  });
  after(async () => {
    await tpm?.stop();
    metadata?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  for (const variant of ['aws-sev-snp', 'gcp-sev-snp'] as const) {
    it(`${variant}: the report comes from <state-root>${CONFIGFS_TSM_REPORT_DIR}`, async () => {
      const tsm = new FakeConfigfsTsm(join(root, CONFIGFS_TSM_REPORT_DIR), replayFirmware(recorded));
      const issuer = snpIssuerFor(variant, () => tpm.client(), { stateRoot: root, metadataUrl, tsmFs: tsm })!;
      const doc = decodeDocument(await issuer.issue(Buffer.from('tls key'), Buffer.alloc(32, 3)));
      const info = decodeSnpInstanceInfo(doc.instanceInfo);
      assert.deepEqual(info.attestationReport, vlekReport, 'the replayed report');
      assert.equal(tsm.requests.length, 1);
      assert.equal(tsm.requests[0]!.reportData.length, 64);
      if (variant === 'gcp-sev-snp') {
        assert.deepEqual([info.gcp?.projectId, info.gcp?.zone, info.gcp?.instanceName], ['asterism-node-root', 'europe-west3-b', 'snp-node']);
        assert.ok(metadataHits.includes('/computeMetadata/v1/instance/name'), 'asked the metadata server at --metadata');
      } else {
        const pem = info.reportSigner.toString('utf8');
        assert.equal(Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64').toString('hex'), parseCertTable(recorded.certTable).get(CERT_TABLE_GUID.vlek)!.toString('hex'), 'the VLEK from the replayed certificate table');
      }
    });
  }

  it('without configfs-tsm under the state root: ISSUER_FAILED naming the paths under it', async () => {
    const bare = mkdtempSync(join(tmpdir(), 'bootstrapper-snp-bare-'));
    try {
      const issuer = snpIssuerFor('aws-sev-snp', () => tpm.client(), { stateRoot: bare })!;
      await assert.rejects(issuer.issue(Buffer.from('u'), Buffer.alloc(32)), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'ISSUER_FAILED');
        assert.ok(e.message.includes(`${bare}${CONFIGFS_TSM_REPORT_DIR} (configfs-tsm) does not exist and there is no ${bare}/dev/sev-guest`), e.message);
        return true;
      });
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
