/**
 * Hot reload of the attestation config with the REAL qemu-vtpm variant: a joining "node" attests
 * with a swtpm quote; the joinservice's attestation config (a ConfigMap-style volume: `..data`
 * symlink swaps) decides which PCR values it accepts. Edits change acceptance without a restart;
 * refusals name the PCR in the log and are counted in the metrics; in-flight joins survive reloads.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { missingComponent } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { call, joinRequest, startHarness, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable() || (swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT));

/** The joinservice's config folder as a kubelet ConfigMap volume: file -> ..data/file, ..data -> ..<version>. */
class ConfigMapVolume {
  #version = 0;
  constructor(readonly dir: string) {}
  publish(files: Record<string, string | Buffer>): void {
    const version = `..v${++this.#version}`;
    mkdirSync(join(this.dir, version));
    for (const [name, data] of Object.entries(files)) writeFileSync(join(this.dir, version, name), data);
    symlinkSync(version, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
  }
  link(name: string): void {
    symlinkSync(join('..data', name), join(this.dir, name));
  }
}

const measurements = (pcrs: Record<number, string>, warnOnly: number[] = []) =>
  JSON.stringify({ measurements: Object.fromEntries(Object.entries(pcrs).map(([i, v]) => [i, { expected: v, warnOnly: warnOnly.includes(Number(i)) }])) });

describe('joinservice: qemu-vtpm attestation config hot reload', { skip }, () => {
  let tpm: Swtpm;
  let h: Harness;
  let volume: ConfigMapVolume;
  let pcr4: string;
  let client: joinApi.APIClient;

  before(async () => {
    tpm = await startSwtpm();
    const c = await tpm.client();
    await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update('asterism image').digest() }]);
    pcr4 = (await c.pcrRead([4], TPM_ALG.SHA256)).get(4)!.toString('hex');
    // Identity binding is not the subject here (identity-binding.int.spec.ts): reference behaviour.
    h = await startHarness('qemu-vtpm', measurements({ 4: pcr4 }), ['--identity-binding=off']);
    // Re-publish the config as a ConfigMap volume, as the joinservice DaemonSet mounts it.
    volume = new ConfigMapVolume(h.configDir);
    const { rmSync, readFileSync } = await import('node:fs');
    const salt = readFileSync(join(h.configDir, 'measurementSalt'));
    rmSync(join(h.configDir, 'attestationConfig'));
    rmSync(join(h.configDir, 'measurementSalt'));
    volume.publish({ attestationConfig: measurements({ 4: pcr4 }), measurementSalt: salt });
    volume.link('attestationConfig');
    volume.link('measurementSalt');
    client = new joinApi.APIClient(h.endpoint, atlsChannelCredentials({ issuer: new QemuVtpmIssuer(() => tpm.client()) }));
  });
  after(async () => {
    client?.close();
    await h?.stop();
    await tpm?.stop();
  });

  const reload = async (config: string) => {
    const salt = Buffer.alloc(32, 0x33);
    const before = h.joinservice.jsonLogs().filter((l) => l.msg === 'attestation config reloaded').length;
    volume.publish({ attestationConfig: config, measurementSalt: salt });
    await h.joinservice.waitForLog(() => h.joinservice.jsonLogs().filter((l) => l.msg === 'attestation config reloaded').length > before, 15_000);
  };
  const freshClient = () => new joinApi.APIClient(h.endpoint, atlsChannelCredentials({ issuer: new QemuVtpmIssuer(() => tpm.client()) }));

  it('accepts a node whose PCRs match the config', async () => {
    const { err } = await call((cb) => client.issueJoinTicket(joinRequest(h.dir, 'vtpm-1'), cb));
    assert.equal(err, null, err?.details);
  });

  it('an edited config refuses the same node, naming the PCR, without a restart; reverting accepts it again', async () => {
    const wrong = 'ab'.repeat(32);
    await reload(measurements({ 4: wrong }));
    const c1 = freshClient();
    try {
      const { err } = await call((cb) => c1.issueJoinTicket(joinRequest(h.dir, 'vtpm-2'), cb));
      assert.ok(err && [grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED].includes(err.code), `got ${err?.code}: ${err?.details}`);
    } finally {
      c1.close();
    }
    const refusal = await h.joinservice.waitForLog((l) => l.msg === 'attestation refused');
    assert.equal(refusal.reason, 'MEASUREMENT_MISMATCH');
    assert.match(String(refusal.error), /PCR\[?4\]?/);
    assert.match(String(refusal.error), new RegExp(wrong.slice(0, 8)));
    const metrics = await (await fetch(`http://127.0.0.1:${h.joinservice.jsonLogs().find((l) => l.msg === 'joinservice serving')!.metricsPort as number}/metrics`)).text();
    assert.match(metrics, /joinservice_tickets_refused_total\{kind="attestation",reason="MEASUREMENT_MISMATCH",variant="qemu-vtpm"\} [1-9]/);
    assert.match(metrics, /joinservice_measurement_mismatches_total\{variant="qemu-vtpm",pcr="4"\} [1-9]/);

    await reload(measurements({ 4: pcr4 }));
    const c2 = freshClient();
    try {
      const { err } = await call((cb) => c2.issueJoinTicket(joinRequest(h.dir, 'vtpm-3'), cb));
      assert.equal(err, null, err?.details);
    } finally {
      c2.close();
    }
  });

  it('joins in flight during reloads all succeed', async () => {
    const clients = Array.from({ length: 6 }, () => freshClient());
    try {
      const joins = clients.map((c, i) => call((cb) => c.issueJoinTicket(joinRequest(h.dir, `inflight-${i}`), cb)));
      // Two reloads to configs that still accept the node (a warn-only extra PCR), while joins run.
      await reload(measurements({ 4: pcr4, 9: '00'.repeat(32) }, [9]));
      await reload(measurements({ 4: pcr4 }));
      const results = await Promise.all(joins);
      assert.deepEqual(results.map((r) => r.err?.details ?? null), results.map(() => null));
    } finally {
      clients.forEach((c) => c.close());
    }
  });
});
