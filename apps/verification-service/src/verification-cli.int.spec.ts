/**
 * The verification-service program (main.ts, what the chart's DaemonSet pod runs) as a
 * process on a swtpm vTPM with boot PCRs and PCR 15 marked with a cluster ID, against the real
 * `asterism verify --endpoint` process: right / wrong `--cluster-id`, `-o json`, the HTTP
 * endpoint, a replayed document (attestation failure), a PCR extended on the node's TPM while the
 * service runs (possible only because it opens the single swtpm connection per document and
 * closes it after), an unreachable endpoint, bad flags, SIGTERM. Loopback only.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Variant } from '@asterism/attestation';
import { encodeBase64UrlPadded } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import { missingComponent, runCaptured, ServiceProcess, startTsProcess, WORKSPACE_ROOT } from '@asterism/testing';
import { SocketTransport, TPM_ALG, TPM_HT, TpmClient } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { perCallIssuer } from './start.js';
import { VerificationService } from './verification-service.js';

const ENTRY = 'apps/verification-service/src/main.ts';
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

describe('verification-service program (per-document TPM connection) + asterism verify --endpoint', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'verify-cli-'));
  const clusterId = randomBytes(32);
  let swtpm: Swtpm;
  let service: ServiceProcess;
  let replaying: VerificationService;
  let httpPort: number;
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
    service = startTsProcess(ENTRY, ['--attestation-variant=qemu-vtpm', `--tpm=${spec}`, '--host=127.0.0.1', '--grpc-port=0', '--http-port=0']);
    const serving = await service.waitForLog((l) => l.msg === 'verification service serving', 60_000);
    assert.deepEqual([serving.component, serving.variant, serving.tpm], ['verification-service', 'qemu-vtpm', spec]);
    endpoint = `127.0.0.1:${serving.grpc as number}`;
    httpPort = serving.http as number;
    // A node that answers with a document over another nonce (a replay): its quote is genuine.
    const issuer = perCallIssuer({ variant: Variant.fromString('qemu-vtpm'), stateRoot: '/', tpm: spec, csp: 'QEMU', metadata: '' });
    replaying = new VerificationService({ variant: issuer.variant, issue: (userData) => issuer.issue(userData, Buffer.alloc(32, 7)) }, createNopLogger());
    replayEndpoint = `127.0.0.1:${(await replaying.listen('127.0.0.1', { grpc: 0, http: 0 })).grpc}`;
  });
  after(async () => {
    await service?.stop();
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

  it('HTTP: GET /?nonce= answers {"data": <document>}; between documents the TPM holds no object and no connection', async () => {
    const nonce = randomBytes(32);
    const res = await fetch(`http://127.0.0.1:${httpPort}/?nonce=${encodeBase64UrlPadded(nonce)}`);
    assert.equal(res.status, 200);
    const doc = Buffer.from(((await res.json()) as { data: string }).data, 'base64');
    assert.ok(doc.length > 500, `document of ${doc.length} bytes`);
    // swtpm serves one connection: this one is served at once, and finds no attestation key left loaded.
    const tpm = new TpmClient(await SocketTransport.connect({ path: swtpm.socketPath }, { timeoutMs: 5_000 }));
    try {
      assert.deepEqual(await tpm.listHandles(TPM_HT.TRANSIENT << 24), []);
    } finally {
      await tpm.transport.close();
    }
  });

  it('bad flags: exit 2 with the reason and the usage', async () => {
    for (const [args, reason] of [
      [['--tpm=unix:/x'], /the attestation variant is required/],
      [['--attestation-variant=qemu-vtpm', '--tpm=swtpm'], /invalid --tpm "swtpm"/],
      [['--attestation-variant=qemu-vtpm', '--host=node-0'], /invalid --host "node-0": want an IP address/],
      [['--attestation-variant=qemu-vtpm', '--grpc-port=9000', '--http-port=9000'], /--grpc-port and --http-port are both 9000/],
    ] as const) {
      const r = await runCaptured(process.execPath, ['--import', 'tsx', join(WORKSPACE_ROOT, ENTRY), ...args], { timeoutMs: 60_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, reason);
      assert.match(r.stderr, /Usage: verification-service/);
    }
  });

  // Last: it changes the TPM for good.
  it('a PCR extended on the running node\'s TPM while it serves: refused, exit 1, naming PCR 9', async () => {
    await extend(swtpm.socketPath, 9, 'unexpected initrd module');
    const r = await cli(['verify', `--endpoint=${endpoint}`, `--cluster-id=${clusterId.toString('base64')}`, ...att()]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, / {2}9 {2}MISMATCH +expected [0-9a-f]{64}/);
    assert.match(r.stdout, /is refused/);
  });

  it('stops cleanly on SIGTERM', async () => {
    const exit = await service.stop('SIGTERM');
    assert.equal(exit.code, 0, service.allOutput());
    assert.ok(service.jsonLogs().some((l) => l.msg === 'shutdown complete'));
  });
});
