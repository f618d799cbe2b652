/**
 * The `asterism` single executable as a user runs it: copied into an empty folder outside the
 * repository, started from another empty folder with a PATH that holds no `node` and an
 * environment without NODE_PATH/NODE_OPTIONS, so nothing of this checkout can be reached.
 * `--help`, `version` (the stamped commit, Kubernetes versions and variants) and
 * `verify --endpoint` against a node: the verification-service program on loopback with a swtpm
 * vTPM whose boot PCRs and PCR 15 (the cluster's mark) are set, right and wrong cluster ID.
 *
 * The executable is built once per input hash (tools/release/src/sea.ts cache).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { missingComponent, ServiceProcess, startTsProcess } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { bundleCli, cliBuildFacts, type CliBuildFacts } from './cli-bundle.js';
import { buildSea } from './sea.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

/** Every folder from `dir` up to `/` holds no node_modules. */
function noNodeModulesAbove(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return false;
    if (d === dirname(d)) return true;
  }
}

describe('asterism single executable, outside the checkout and without node', { skip }, () => {
  const top = mkdtempSync(join(tmpdir(), 'asterism-exe-'));
  const binDir = join(top, 'bin');
  const emptyPath = join(top, 'path');
  const cwd = join(top, 'work');
  const exe = join(binDir, 'asterism');
  const clusterId = randomBytes(32);
  const configFile = join(cwd, 'attestation-config.json');
  let facts: CliBuildFacts;
  let swtpm: Swtpm;
  let node: ServiceProcess;
  let endpoint: string;

  /** Runs the executable with nothing but an empty PATH and HOME in its environment. */
  const asterism = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(exe, args, { cwd, env: { PATH: emptyPath, HOME: top }, stdio: ['ignore', 'pipe', 'pipe'] });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
    });

  before(async () => {
    for (const d of [binDir, emptyPath, cwd]) mkdirSync(d, { recursive: true });
    facts = await cliBuildFacts();
    const bundle = await bundleCli(join(top, 'build'), 'cjs', facts);
    const sea = await buildSea({ script: bundle.outfile, output: join(top, 'build', 'asterism') });
    process.stderr.write(`# executable ${sea.bytes} bytes, ${sea.cached ? 'from the cache' : 'built'} in ${sea.ms} ms (input ${sea.inputHash.slice(0, 12)})\n`);
    copyFileSync(sea.path, exe);
    rmSync(join(top, 'build'), { recursive: true, force: true });

    swtpm = await startSwtpm();
    const tpm = await swtpm.client();
    await tpm.startup('clear');
    for (const [pcr, label] of [[4, 'boot loader'], [9, 'initrd'], [11, 'unified kernel image']] as const) await tpm.pcrExtend(pcr, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(label) }]);
    await tpm.pcrExtend(15, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(clusterId) }]);
    const values = await tpm.pcrRead([4, 9, 11], TPM_ALG.SHA256);
    await swtpm.disconnect();
    const measurements = Object.fromEntries([...values].map(([pcr, v]) => [String(pcr), { expected: Buffer.from(v).toString('hex'), warnOnly: false }]));
    measurements['15'] = { expected: '00'.repeat(32), warnOnly: false };
    writeFileSync(configFile, JSON.stringify({ measurements }));

    node = startTsProcess('apps/verification-service/src/main.ts', ['--attestation-variant=qemu-vtpm', `--tpm=unix:${swtpm.socketPath}`, '--host=127.0.0.1', '--grpc-port=0', '--http-port=0']);
    const serving = await node.waitForLog((l) => l.msg === 'verification service serving', 60_000);
    endpoint = `127.0.0.1:${serving.grpc as number}`;
  });
  after(async () => {
    await node?.stop();
    await swtpm?.stop();
    rmSync(top, { recursive: true, force: true });
  });

  it('runs from folders without node_modules above them, with no node on PATH', () => {
    assert.ok(noNodeModulesAbove(binDir) && noNodeModulesAbove(cwd), 'a node_modules folder above the test folders');
    assert.ok(!existsSync(join(emptyPath, 'node')));
  });

  it('--help: the commands, exit 0; an unknown command: exit 2', async () => {
    const help = await asterism(['--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: asterism <command>/);
    for (const cmd of ['init', 'verify', 'recover', 'version']) assert.match(help.stdout, new RegExp(`^  ${cmd} `, 'm'));
    assert.equal(help.stderr, '', 'nothing on stderr (no Node warnings)');
    const bad = await asterism(['frobnicate']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown command "frobnicate"/);
  });

  it('version: the stamped commit, the Kubernetes versions and the variants of the sources it was built from', async () => {
    const text = await asterism(['version']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^asterism ${facts.version.replace(/\./g, '\\.')}\n`));
    assert.match(text.stdout, new RegExp(`^commit: +${facts.commit}$`, 'm'));
    assert.match(text.stdout, /^build: +bundle$/m);
    const json = await asterism(['version', '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), { ...facts, build: 'bundle' });
    assert.ok(facts.kubernetesVersions.length > 0 && facts.attestationVariants.includes('qemu-vtpm'));
  });

  it('verify --endpoint: the node with the right cluster ID is accepted (exit 0), a wrong one refused (exit 1)', async () => {
    const att = ['--variant=qemu-vtpm', `--attestation-config=${configFile}`];
    const ok = await asterism(['verify', `--endpoint=${endpoint}`, `--cluster-id=${clusterId.toString('base64')}`, ...att]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /All enforced measurements match/);
    assert.match(ok.stdout, /Cluster ID \(PCR 15\): matches/);
    const wrong = await asterism(['verify', `--endpoint=${endpoint}`, `--cluster-id=${randomBytes(32).toString('hex')}`, ...att]);
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.match(wrong.stdout, /Cluster ID \(PCR 15\): MISMATCH/);
  });
});
