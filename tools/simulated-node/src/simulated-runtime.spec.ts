import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DummyIssuer } from '@asterism/attestation';
import { NodeFileWriter, parseFlags, TcpReadinessProbe, type RunResult } from '@asterism/bootstrapper/runtime';
import { createNopLogger } from '@asterism/logger';
import { splitSimulatedFlags } from './flags.js';
import { SimulatedNodeRuntime } from './simulated-runtime.js';

const metadata = {
  self: async () => assert.fail('the runtime reads no identity of its own'),
  list: async () => [],
  getLoadBalancerEndpoint: async () => ({ host: '', port: '' }),
  initSecretHash: async () => '',
  uid: async () => '',
};

/** A simulated runtime built from argv as main.ts builds it (no `--local-apps`: no verification-service program). */
function runtime(argv: string[]) {
  const { flags, rest } = splitSimulatedFlags(['--attestation-variant=dummy', '--init-host=127.0.0.1', '--metadata=file:/m.json', '--node-name=n', ...argv]);
  const cfg = parseFlags(rest, {})!;
  return new SimulatedNodeRuntime({ cfg, metadata, files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'simulated-runtime-'))), logger: createNopLogger() }, flags);
}

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('simulated node runtime', () => {
  it('keeps the recovery server and names itself', () => {
    const r = runtime([]);
    assert.equal(r.name, 'simulated');
    assert.equal(r.keepsRecoveryServer, true);
  });

  for (const result of ['joined', 'rejoined', 'stopped'] as RunResult[]) {
    it(`${result}, verification off, nothing supervised: releases the TPM and exits`, async () => {
      let released = 0;
      const resident = await runtime(['--verify-grpc-port=0']).afterBoot({ result, issuer: new DummyIssuer(), releasePlatform: async () => void released++ });
      assert.equal(resident, undefined);
      assert.equal(released, 1);
    });
  }

  it('joined with verification on and no program: stays and serves verify.API until stopped', async () => {
    const port = await freePort();
    let released = 0;
    const resident = await runtime([`--verify-grpc-port=${port}`, '--verify-http-port=0']).afterBoot({ result: 'joined', issuer: new DummyIssuer(), releasePlatform: async () => void released++ });
    assert.equal(resident?.reason, 'verification service');
    assert.equal(released, 0, 'the resident process keeps its TPM connection');
    const probe = new TcpReadinessProbe();
    assert.equal(await probe.reachable(`127.0.0.1:${port}`), true);
    await resident!.stop();
    assert.equal(await probe.reachable(`127.0.0.1:${port}`), false);
  });
});
