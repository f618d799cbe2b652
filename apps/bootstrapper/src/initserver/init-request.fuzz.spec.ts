import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NO_STORE_URI } from '@asterism/crypto';
import { NOT_REACHED, protoFromJson, runGate, SEED_KMS_URI, type FuzzTarget } from '@asterism/fuzz';
import { init } from '@asterism/proto';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { validateInitRequest } from './init-request.js';

// The bootstrapper's part of the foreign-exception gate (tools/fuzz/README.md): Init request
// validation fed mutations of a valid request. Only InitFailure and typed parser errors may escape.
describe('foreign-exception gate: Init request validation', () => {
  it('mutated Init requests are accepted or refused with a typed error, never another exception', async () => {
    const seed = init.InitRequest.toJSON({
      kmsUri: SEED_KMS_URI,
      storageUri: NO_STORE_URI,
      measurementSalt: Buffer.alloc(32, 1),
      kubernetesVersion: 'v1.31.1',
      conformanceMode: false,
      kubernetesComponents: [],
      initSecret: Buffer.alloc(32, 2),
      clusterName: 'fuzz',
      apiserverCertSans: ['10.0.0.1', 'api.example.internal'],
      serviceCidr: '10.96.0.0/12',
    });
    const target: FuzzTarget = {
      name: 'request.init',
      parser: 'validateInitRequest (apps/bootstrapper/src/initserver/init-request.ts)',
      seeds: [{ name: 'Init request', bytes: Buffer.from(JSON.stringify(seed)) }],
      runs: 2000,
      shape: { json: true },
      run: (b) => {
        const req = protoFromJson(b, init.InitRequest);
        return req === NOT_REACHED ? req : validateInitRequest(req);
      },
    };
    const report = await runGate([target], { out: join(WORKSPACE_ROOT, '.test-results', 'fuzz-gate-bootstrapper.json') });
    for (const f of report.findings) console.log(`[fuzz-gate] FOREIGN in ${f.target} (${f.parser}), from ${f.seed}, input #${f.index}: ${f.error}\n${f.stack}\ninput (hex): ${f.inputHex}`);
    console.log(`[fuzz-gate] bootstrapper: ${report.inputs} inputs tried, ${report.foreign} foreign exceptions, ${report.seconds} s`);
    assert.ok(report.targets[0]!.accepted >= 1, 'the real request is accepted');
    assert.equal(report.foreign, 0);
  });
});
