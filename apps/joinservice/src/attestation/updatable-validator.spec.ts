import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AttestationError, Variant, type Validator } from '@asterism/attestation';
import { createNopLogger } from '@asterism/logger';
import { ConfigWatcher } from './config-watcher.js';
import { UpdatableValidator } from './updatable-validator.js';

/** A validator that accepts only when the config says {"accept": true}; records its generation. */
function factory(configJson: string): Validator {
  const cfg = JSON.parse(configJson) as { accept: boolean; delayMs?: number };
  return {
    variant: Variant.fromString('dummy'),
    async validate(_doc, _nonce) {
      if (cfg.delayMs) await new Promise((r) => setTimeout(r, cfg.delayMs));
      if (!cfg.accept) throw new AttestationError('MEASUREMENT_MISMATCH', 'config refuses everyone');
      return Buffer.from('ok');
    },
  };
}

/** Lays out a directory the way kubelet projects a ConfigMap: file -> ..data/file, ..data -> ..<ts>. */
function configMapDir(content: string) {
  const dir = mkdtempSync(join(tmpdir(), 'cm-'));
  let n = 0;
  const publish = (text: string) => {
    const ts = join(dir, `..2026_${n++}`);
    mkdirSync(ts);
    writeFileSync(join(ts, 'attestationConfig'), text);
    const tmpLink = join(dir, '..data_tmp');
    symlinkSync(ts.split('/').pop()!, tmpLink);
    renameSync(tmpLink, join(dir, '..data'));
  };
  publish(content);
  symlinkSync('..data/attestationConfig', join(dir, 'attestationConfig'));
  return { path: join(dir, 'attestationConfig'), publish };
}

describe('UpdatableValidator + ConfigWatcher', () => {
  it('follows ConfigMap symlink swaps without a restart', async () => {
    const cm = configMapDir('{"accept": true}');
    const v = await UpdatableValidator.create(cm.path, factory, createNopLogger());
    const w = new ConfigWatcher(cm.path, () => v.reload(), createNopLogger(), 20, 0);
    await w.start();
    try {
      assert.deepEqual(Buffer.from(await v.validate(Buffer.alloc(0), Buffer.alloc(0))), Buffer.from('ok'));
      cm.publish('{"accept": false}');
      for (let i = 0; i < 50 && v.generation === 1; i++) await w.settle();
      assert.equal(v.generation, 2);
      await assert.rejects(v.validate(Buffer.alloc(0), Buffer.alloc(0)), (e: unknown) => e instanceof AttestationError && e.code === 'MEASUREMENT_MISMATCH');
      cm.publish('{"accept": true}');
      for (let i = 0; i < 50 && v.generation === 2; i++) await w.settle();
      assert.equal(v.generation, 3);
      await v.validate(Buffer.alloc(0), Buffer.alloc(0));
    } finally {
      w.stop();
    }
  });

  it('lets an in-flight validation finish with the config it started with', async () => {
    const cm = configMapDir('{"accept": true, "delayMs": 200}');
    const v = await UpdatableValidator.create(cm.path, factory, createNopLogger());
    const inFlight = v.validate(Buffer.alloc(0), Buffer.alloc(0));
    cm.publish('{"accept": false}');
    assert.equal(await v.reload(), true);
    assert.deepEqual(Buffer.from(await inFlight), Buffer.from('ok'));
    await assert.rejects(v.validate(Buffer.alloc(0), Buffer.alloc(0)));
  });

  it('keeps the previous validator when the new config is broken or missing', async () => {
    const cm = configMapDir('{"accept": true}');
    const v = await UpdatableValidator.create(cm.path, factory, createNopLogger());
    cm.publish('{not json');
    assert.equal(await v.reload(), false);
    assert.equal(v.generation, 1);
    await v.validate(Buffer.alloc(0), Buffer.alloc(0));
  });

  it('fails to start on a missing initial config', async () => {
    await assert.rejects(UpdatableValidator.create('/nonexistent/attestationConfig', factory, createNopLogger()), /ENOENT/);
  });

  it('validations do not serialise behind each other', async () => {
    const cm = configMapDir('{"accept": true}');
    let started = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const blocking = (): Validator => ({
      variant: Variant.fromString('dummy'),
      async validate() {
        started++;
        await gate;
        return Buffer.from('ok');
      },
    });
    const v = await UpdatableValidator.create(cm.path, blocking, createNopLogger());
    const all = Promise.all(Array.from({ length: 10 }, () => v.validate(Buffer.alloc(0), Buffer.alloc(0))));
    // A reload must not wait for the blocked validations either.
    assert.equal(await v.reload(), true);
    await new Promise((r) => setImmediate(r));
    assert.equal(started, 10, 'all ten validations run concurrently');
    release();
    assert.equal((await all).length, 10);
  });
});
