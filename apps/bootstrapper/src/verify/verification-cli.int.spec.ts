/**
 * The verification service as a kubeadm-backend node serves it after bootstrapping (a TPM
 * connection per document, docs/adr/0028) against the real `asterism verify --endpoint` process:
 * a swtpm vTPM with boot PCRs and PCR 15 marked with a cluster ID; right / wrong `--cluster-id`,
 * `-o json`, a replayed document (attestation failure), a PCR extended on the running node's TPM while it serves (possible only because the
 * service does not hold the single swtpm connection), an unreachable endpoint. Loopback only.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { createNopLogger } from '@asterism/logger';
import { missingComponent, runCaptured, WORKSPACE_ROOT } from '@asterism/testing';
import { SocketTransport, TPM_ALG, TpmClient } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { SharedTpm } from '../tpm/tpm-opener.js';
import { PerCallIssuer } from './per-call-issuer.js';
import { VerificationService } from './verification-service.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

/** The CLI process as a user runs it. */
const cli = (args: string[]) => runCaptured(process.execPath, ['--import', 'tsx', join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), ...args], { timeoutMs: 60_000 });

async function extend(socket: string, pcr: number, label: string): Promise<void> {
  const tpm = new TpmClient(await SocketTransport.connect({ path: socket }));
  try {
    await tpm.pcrExtend(pcr, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(label) }]);
  } finally {
    await tpm.transport.close();
  }
}

describe('verification service with a per-document TPM connection + asterism verify --endpoint', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'verify-cli-'));
  const clusterId = randomBytes(32);
  let swtpm: Swtpm;
  let service: VerificationService;
  let replaying: VerificationService;
  let endpoint: string;
  let replayEndpoint: string;
  const configFile = join(dir, 'attestation-config.json');
  const att = () => ['--variant=qemu-vtpm', `--attestation-config=${configFile}`];

  before(async () => {
    swtpm = await startSwtpm();
    // swtpm serves one connection at a time: measure and mark over the shared one, then release it.
    const tpm = await swtpm.client();
    await tpm.startup('clear');
    for (const [pcr, label] of [[4, 'boot loader'], [9, 'initrd'], [11, 'unified kernel image']] as const) await tpm.pcrExtend(pcr, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(label) }]);
    // The node's mark: PCR 15 extended once with SHA256(cluster ID) (docs/protocol/verification.md).
    await tpm.pcrExtend(15, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(clusterId) }]);
    const values = await tpm.pcrRead([4, 9, 11], TPM_ALG.SHA256);
    await swtpm.disconnect();
    const measurements = Object.fromEntries([...values].map(([pcr, v]) => [String(pcr), { expected: Buffer.from(v).toString('hex'), warnOnly: false }]));
    measurements['15'] = { expected: '00'.repeat(32), warnOnly: false };
    writeFileSync(configFile, JSON.stringify({ measurements }));

    const spec = `unix:${swtpm.socketPath}`;
    const variant = new QemuVtpmIssuer(async () => Promise.reject(new Error('unused'))).variant;
    const issuer = new PerCallIssuer(variant, () => {
      const t = new SharedTpm(spec);
      return { issuer: new QemuVtpmIssuer(t.open), close: () => t.close() };
    });
    service = new VerificationService(issuer, createNopLogger());
    endpoint = `127.0.0.1:${(await service.listen('127.0.0.1', { grpc: 0, http: 0 })).grpc}`;
    // A node that answers with a document over another nonce (a replay): its quote is genuine.
    replaying = new VerificationService({ variant, issue: (userData) => issuer.issue(userData, Buffer.alloc(32, 7)) }, createNopLogger());
    replayEndpoint = `127.0.0.1:${(await replaying.listen('127.0.0.1', { grpc: 0, http: 0 })).grpc}`;
  });
  after(async () => {
    await service?.close();
    await replaying?.close();
    await swtpm?.stop();
  });

  it('right cluster ID: accepted, exit 0; -o json says so', async () => {
    const r = await cli(['verify', `--endpoint=${endpoint}`, `--cluster-id=${clusterId.toString('base64')}`, ...att()]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /All enforced measurements match/);
    assert.match(r.stdout, /Cluster ID \(PCR 15\): matches/);
    const json = await cli(['verify', `--endpoint=${endpoint}`, `--cluster-id=${clusterId.toString('hex')}`, '-o', 'json', ...att()]);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { accepted: boolean; clusterId: { ok: boolean } };
    assert.deepEqual([parsed.accepted, parsed.clusterId.ok], [true, true]);
  });

  it('wrong cluster ID: refused, exit 1, expected vs actual PCR 15', async () => {
    const r = await cli(['verify', `--endpoint=${endpoint}`, `--cluster-id=${randomBytes(32).toString('base64')}`, ...att()]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /Cluster ID \(PCR 15\): MISMATCH\n {2}expected [0-9a-f]{64}\n {2}actual {3}[0-9a-f]{64}/);
    assert.match(r.stdout, /does not carry the given cluster ID/);
  });

  it('attestation failure (a genuine document replayed for another nonce): refused, exit 1, with the reason', async () => {
    const r = await cli(['verify', `--endpoint=${replayEndpoint}`, `--cluster-id=${clusterId.toString('base64')}`, ...att()]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /Node 127\.0\.0\.1:\d+ is refused: .*nonce/i);
  });

  it('unreachable endpoint: exit 3 with the endpoint named', async () => {
    const r = await cli(['verify', '--endpoint=127.0.0.1:1', '--timeout=2', ...att()]);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.match(r.stderr, /no attestation from the verification service at 127\.0\.0\.1:1/);
  });

  // Last: it changes the TPM for good.
  it('a PCR extended on the running node\'s TPM while it serves: refused, exit 1, naming PCR 9', async () => {
    await extend(swtpm.socketPath, 9, 'unexpected initrd module');
    const r = await cli(['verify', `--endpoint=${endpoint}`, `--cluster-id=${clusterId.toString('base64')}`, ...att()]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, / {2}9 {2}MISMATCH +expected [0-9a-f]{64}/);
    assert.match(r.stdout, /is refused/);
  });
});
