/**
 * The container payload: each app bundled with esbuild into one main.mjs (+ lazily loaded chunks) in a
 * folder outside the repository (so nothing can be resolved from node_modules), started with plain
 * `node` as the image does, and asked over gRPC: grpc.health.v1 answers SERVING and the keyservice
 * derives the docs/protocol/key-hierarchy.md worked-example key.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { kms } from '@asterism/proto';
import { missingComponent, ServiceProcess } from '@asterism/testing';
import { APPS, bundleApp, entryPoint, type BundleResult } from './bundle.js';

const HealthClient = grpc.makeGenericClientConstructor(healthService, 'grpc.health.v1.Health');

function healthCheck(port: number, serviceName = ''): Promise<string> {
  const client = new HealthClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise<string>((resolve, reject) => {
    (client as unknown as { check(req: unknown, cb: (err: Error | null, res?: { status: string }) => void): void }).check({ service: serviceName }, (err, res) => {
      client.close();
      if (err) reject(err);
      else resolve(res!.status);
    });
  });
}

describe('bundled keyservice (dist/keyservice/main.mjs)', () => {
  let out: string;
  let bundle: BundleResult;
  let proc: ServiceProcess;
  let port: number;
  let metricsPort: number;

  before(async () => {
    out = mkdtempSync(join(tmpdir(), 'asterism-bundle-'));
    bundle = await bundleApp('keyservice', { outRoot: out });
    writeFileSync(join(out, 'mastersecret'), Buffer.alloc(32, 0x00));
    writeFileSync(join(out, 'salt'), Buffer.alloc(32, 0x01));
    const child = spawn(
      process.execPath,
      [bundle.outfile, '--host=127.0.0.1', '--port=0', '--metrics-port=0', `--master-secret=${join(out, 'mastersecret')}`, `--salt=${join(out, 'salt')}`],
      { cwd: out, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc = new ServiceProcess(child);
    const ready = await proc.waitForLog((l) => l.msg === 'keyservice serving');
    port = ready.port as number;
    metricsPort = ready.metricsPort as number;
  });
  after(async () => {
    await proc?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  it('is an ESM entry and the chunks it loads lazily; the health proto is embedded, no file beside them', () => {
    const files = readdirSync(join(out, 'keyservice')).sort();
    assert.ok(files.includes('main.mjs') && !files.includes('proto'), files.join(', '));
    for (const f of readdirSync(join(out, 'keyservice', 'chunks'))) assert.match(f, /^[\w-]+\.mjs(\.map|\.LEGAL\.txt)?$/);
    assert.ok(bundle.bytes > 100_000 && bundle.bytes < 10_000_000, `bundle size ${bundle.bytes}`);
  });

  it('answers grpc.health.v1 Check with SERVING (overall and kms.API)', async () => {
    assert.equal(await healthCheck(port), 'SERVING');
    assert.equal(await healthCheck(port, 'kms.API'), 'SERVING');
    await assert.rejects(healthCheck(port, 'no.such.Service'), (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND);
  });

  it('derives the docs/protocol/key-hierarchy.md disk key for the all-zero UUID', async () => {
    const client = new kms.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const key = await new Promise<Buffer>((resolve, reject) =>
      client.getDataKey({ dataKeyId: '00000000-0000-0000-0000-000000000000', length: 32 }, (err, res) => (err ? reject(err) : resolve(res!.dataKey))),
    );
    client.close();
    assert.equal(key.toString('hex'), 'cafa93353ca216e2a84aa958f9126808bcfff0f6c32187710fb583caa1c70b64');
  });

  it('serves Prometheus metrics and stops cleanly on SIGTERM', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /keyservice_grpc_server_handled_total/);
    const exit = await proc.stop('SIGTERM');
    assert.equal(exit.code, 0, proc.allOutput());
  });
});

describe('every app with a main.ts bundles and starts', () => {
  for (const app of APPS) {
    const { entry } = entryPoint(app);
    // Every app of APPS ships in the image: a missing entry point is a missing component (a failure under CI=true).
    const skip = existsSync(entry) ? false : missingComponent(`the ${app} entry point ${entry}`, 'restore the app\'s src/main.ts or remove it from APPS in deploy/src/bundle.ts');
    it(`${app}: bundle runs --help without module errors`, { skip }, async () => {
      const out = mkdtempSync(join(tmpdir(), `asterism-bundle-${app}-`));
      try {
        const b = await bundleApp(app, { outRoot: out });
        const r = spawnSync(process.execPath, [b.outfile, '--help'], { cwd: out, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '' } });
        assert.doesNotMatch(r.stderr, /Cannot find (module|package)|ERR_MODULE_NOT_FOUND|Dynamic require of|ENOENT/, r.stderr);
        assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
        assert.match(r.stdout, /Usage/i);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  }
});
