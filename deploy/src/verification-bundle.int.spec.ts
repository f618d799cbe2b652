/**
 * The verification-service image payload (docs/adr/0028): the bundle of
 * apps/verification-service/src/main.ts staged as the image catalog stages its /app, in a folder
 * outside the repository, started with plain
 * `node` and the image's Node flags (its ENTRYPOINT in the image catalog) on a swtpm vTPM, as the chart's pod runs it: gRPC and HTTP
 * documents that a qemu-vtpm validator accepts over user data "VerifyService" and the caller's
 * nonce, the TPM free between documents, the idle resident set (logged; the chart's memory limit
 * must leave room), clean SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import YAML from 'yaml';
import { QemuVtpmValidator } from '@asterism/attestation';
import { encodeBase64UrlPadded } from '@asterism/crypto';
import { verify } from '@asterism/proto';
import { missingComponent, ServiceProcess } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { bundleApp, REPO_ROOT, type BundleResult } from './bundle.js';
import { imageCatalog, type ImageSpec } from './images/catalog.js';
import { RootfsStage } from './images/rootfs.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

/** Resident set of a process in MiB (/proc/<pid>/status VmRSS). */
function rssMiB(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** The image of the catalog. */
function imageSpec(): ImageSpec {
  const spec = imageCatalog({ etcd: 'unused', pause: 'unused' }).find((i) => i.name === 'verification-service');
  assert.ok(spec, 'the catalog has a verification-service image');
  return spec;
}

/** The Node flags of the image's ENTRYPOINT (between the node binary and the bundle). */
function imageNodeFlags(): string[] {
  const entrypoint = imageSpec().config.entrypoint;
  assert.deepEqual([entrypoint[0], entrypoint.at(-1)], ['/usr/bin/node', '/app/main.mjs']);
  return entrypoint.slice(1, -1);
}

/** Stages only what the image puts under /app (no Node runtime, no Debian libraries: the host's serve). */
class AppOnlyStage extends RootfsStage {
  override addDebianPackages(): void {
    // The host's libraries serve the host's node binary.
  }
  override addFile(src: string, dest: string, mode?: number): void {
    if (dest.startsWith('/app/')) super.addFile(src, dest, mode);
  }
}

/** The memory limit the chart gives the pod, in MiB. */
function chartMemoryLimitMiB(): number {
  const values = YAML.parse(readFileSync(join(REPO_ROOT, 'deploy/charts/verificationservice/values.yaml'), 'utf8')) as { resources: { limits: { memory: string } } };
  const m = /^(\d+)Mi$/.exec(values.resources.limits.memory);
  assert.ok(m, `limit in Mi: ${values.resources.limits.memory}`);
  return Number(m[1]);
}

describe('bundled verification-service (dist/verification-service/main.mjs) on swtpm', { skip }, () => {
  let out: string;
  let bundle: BundleResult;
  let appFiles: string[];
  let swtpm: Swtpm;
  let proc: ServiceProcess;
  let ports: { grpc: number; http: number };
  const validator = new QemuVtpmValidator(new Map());

  before(async () => {
    out = mkdtempSync(join(tmpdir(), 'asterism-verify-bundle-'));
    bundle = await bundleApp('verification-service', { outRoot: join(out, 'bundles') });
    // The image's /app exactly as the catalog stages it: a file the program needs at run time and
    // the image lacks fails here (as the health proto once did in the pod).
    const rootfs = new AppOnlyStage(join(out, 'rootfs'));
    imageSpec().stage(rootfs, { k8sBinDir: '/nonexistent', bundleDir: join(out, 'bundles'), nodeBinary: process.execPath });
    appFiles = rootfs.files;
    swtpm = await startSwtpm();
    // swtpm serves one connection at a time: the service must get it.
    await swtpm.disconnect();
    const args = [...imageNodeFlags(), join(out, 'rootfs', 'app', 'main.mjs'), '--attestation-variant=qemu-vtpm', `--tpm=unix:${swtpm.socketPath}`, '--host=127.0.0.1', '--grpc-port=0', '--http-port=0'];
    proc = new ServiceProcess(spawn(process.execPath, args, { cwd: join(out, 'rootfs', 'app'), env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] }));
    const ready = await proc.waitForLog((l) => l.msg === 'verification service serving');
    ports = { grpc: ready.grpc as number, http: ready.http as number };
  });
  after(async () => {
    await proc?.stop();
    await swtpm?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  it('the image\'s /app: the ESM program (+ maps; the health proto embedded, only chunks it can load), without the metadata providers or a Kubernetes client', () => {
    const chunks = appFiles.filter((f) => f.startsWith('/app/chunks/'));
    assert.deepEqual(appFiles.filter((f) => !chunks.includes(f)), ['/app/main.mjs', '/app/main.mjs.map']);
    for (const f of chunks) assert.match(f, /^\/app\/chunks\/[\w-]+\.mjs(\.map)?$/);
    const program = [bundle.outfile, ...chunks.filter((f) => f.endsWith('.mjs')).map((f) => join(dirname(bundle.outfile), f.slice('/app/'.length)))];
    const text = program.map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const absent of ['@aws-sdk', 'client-node', 'cryptsetup']) assert.ok(!text.includes(absent), `bundle mentions ${absent}`);
    assert.ok(bundle.bytes < 4_000_000, `bundle size ${bundle.bytes}`);
  });

  it('gRPC and HTTP: documents over "VerifyService" and the caller\'s nonce that a qemu-vtpm validator accepts', async () => {
    const client = new verify.APIClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
    const nonce = randomBytes(32);
    const res = await new Promise<verify.GetAttestationResponse>((resolve, reject) => client.getAttestation({ nonce }, (err, r) => (err ? reject(err) : resolve(r!))));
    client.close();
    assert.equal(Buffer.from(await validator.validate(res.attestation, nonce)).toString(), 'VerifyService');
    const httpNonce = randomBytes(32);
    const http = await fetch(`http://127.0.0.1:${ports.http}/?nonce=${encodeBase64UrlPadded(httpNonce)}`);
    assert.equal(http.status, 200);
    const doc = Buffer.from(((await http.json()) as { data: string }).data, 'base64');
    assert.equal(Buffer.from(await validator.validate(doc, httpNonce)).toString(), 'VerifyService');
  });

  it('idle resident set: logged, and well inside the chart\'s memory limit', async () => {
    await new Promise((r) => setTimeout(r, 3000));
    const rss = rssMiB(proc.child.pid!);
    process.stderr.write(`[verification-bundle] idle RSS after 2 documents: ${rss.toFixed(1)} MiB (node ${process.version}, image flags ${imageNodeFlags().join(' ')})\n`);
    // A quarter of the limit stays free for a burst of documents.
    assert.ok(rss < chartMemoryLimitMiB() * 0.75, `idle RSS ${rss.toFixed(1)} MiB, chart limit ${chartMemoryLimitMiB()} MiB`);
  });

  it('stops cleanly on SIGTERM', async () => {
    const exit = await proc.stop('SIGTERM');
    assert.equal(exit.code, 0, proc.allOutput());
  });
});
