/**
 * `asterism recover` as the operator sees it: exit code and message for each bad case, against
 * real aTLS recovery servers on loopback (docs/protocol/recovery.md). The node side's checks are
 * tested in the bootstrapper; here the node answers with the status a real node gives.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer } from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import { recoverproto } from '@asterism/proto';
import { encodeMasterSecretFile } from '../init/outputs.js';
import { UsageError } from '../usage.js';
import { recoverCommand } from './recover-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'recover-cli-'));
const secretFile = join(dir, 'asterism-mastersecret.json');
writeFileSync(secretFile, encodeMasterSecretFile({ key: Buffer.alloc(32, 7), salt: Buffer.alloc(32, 9) }));
const qemuConfig = join(dir, 'qemu-vtpm.json');
writeFileSync(qemuConfig, JSON.stringify({ measurements: { '9': { expected: 'aa'.repeat(32), warnOnly: false } } }));

/** A node's recovery server answering every call with one status (OK = recovered). */
async function recoveryServer(code: grpc.status, details: string): Promise<{ endpoint: string; calls: () => number; stop: () => Promise<void> }> {
  const server = new grpc.Server();
  let calls = 0;
  server.addService(recoverproto.APIService, {
    recover: (_call: grpc.ServerUnaryCall<recoverproto.RecoverMessage, recoverproto.RecoverResponse>, done: grpc.sendUnaryData<recoverproto.RecoverResponse>) => {
      calls++;
      if (code === grpc.status.OK) done(null, {});
      else done({ code, details });
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer() }), (err, p) => (err ? reject(err) : resolve(p))));
  return { endpoint: `127.0.0.1:${port}`, calls: () => calls, stop: () => new Promise((resolve) => server.tryShutdown(() => resolve())) };
}

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await recoverCommand(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

describe('asterism recover: exit codes and messages', () => {
  let servers: Record<'ok' | 'wrongSecret' | 'notWaiting', Awaited<ReturnType<typeof recoveryServer>>>;
  before(async () => {
    servers = {
      ok: await recoveryServer(grpc.status.OK, ''),
      wrongSecret: await recoveryServer(grpc.status.PERMISSION_DENIED, "the key derived from this master secret does not open the node's state disk"),
      notWaiting: await recoveryServer(grpc.status.FAILED_PRECONDITION, 'node is not waiting for recovery'),
    };
  });
  after(async () => {
    for (const s of Object.values(servers)) await s.stop();
  });

  const cases: Array<{ name: string; args: () => string[]; code: number; out: RegExp; stream: 'stdout' | 'stderr' }> = [
    { name: 'recovered', args: () => [`--endpoint=${servers.ok.endpoint}`, '--variant=dummy'], code: 0, out: /127\.0\.0\.1:\d+\trecovered/, stream: 'stdout' },
    { name: 'wrong master secret', args: () => [`--endpoint=${servers.wrongSecret.endpoint}`, '--variant=dummy'], code: 1, out: /FAILED \(KEY_REFUSED\): the node refused the master secret: the key derived from this master secret does not open/, stream: 'stdout' },
    { name: 'node not waiting for recovery', args: () => [`--endpoint=${servers.notWaiting.endpoint}`, '--variant=dummy'], code: 1, out: /FAILED \(NOT_WAITING\): the node refused: node is not waiting for recovery/, stream: 'stdout' },
    { name: 'attestation failure (document of another variant)', args: () => [`--endpoint=${servers.ok.endpoint}`, '--variant=qemu-vtpm', `--attestation-config=${qemuConfig}`], code: 1, out: /FAILED \(ATTESTATION_FAILED\): the node failed attestation: certificate does not contain compatible attestation documents/, stream: 'stdout' },
    { name: 'unreachable node', args: () => ['--endpoint=127.0.0.1:1', '--variant=dummy', '--timeout=1'], code: 3, out: /FAILED \(NODE_UNREACHABLE\): no recovery server reachable after 1 attempts/, stream: 'stdout' },
    { name: 'one bad node among good ones: the worst exit code', args: () => [`--endpoint=${servers.ok.endpoint}`, '--endpoint=127.0.0.1:1', '--variant=dummy', '--timeout=1'], code: 3, out: /\trecovered\n.*FAILED \(NODE_UNREACHABLE\)/, stream: 'stdout' },
    { name: 'missing master secret file', args: () => [`--endpoint=${servers.ok.endpoint}`, '--variant=dummy', `--master-secret=${join(dir, 'nope.json')}`], code: 2, out: /asterism recover: .*master secret/, stream: 'stderr' },
  ];
  for (const c of cases) {
    it(`${c.name}: exit ${c.code}`, async () => {
      const args = c.args();
      const r = await run(args.some((a) => a.startsWith('--master-secret')) ? args : [...args, `--master-secret=${secretFile}`]);
      assert.equal(r.code, c.code, r.stdout + r.stderr);
      assert.match(r[c.stream], c.out);
    });
  }

  it('a wrong master secret is sent once: the refusal is final, not retried', () => {
    assert.equal(servers.wrongSecret.calls(), 1);
  });

  for (const [name, args, message] of [
    ['no endpoint', ['--master-secret=x'], /--endpoint is required/],
    ['no master secret', ['--endpoint=n'], /--master-secret is required/],
    ['no variant', ['--endpoint=n', '--master-secret=x'], /attestation variant is required/],
  ] as const) {
    it(`usage: ${name} (exit 2 through UsageError)`, async () => {
      await assert.rejects(run([...args]), (err: Error) => err instanceof UsageError && message.test(err.message));
    });
  }
});
