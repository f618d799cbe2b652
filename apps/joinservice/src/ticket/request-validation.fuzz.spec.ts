import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sshCaFromSeed } from '@asterism/crypto';
import { NOT_REACHED, opensslKubeletCsrs, protoFromJson, runGate, type FuzzTarget } from '@asterism/fuzz';
import { join as joinpb } from '@asterism/proto';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { parseJoinRequest } from './request-validation.js';

// The joinservice's part of the foreign-exception gate (tools/fuzz/README.md): IssueJoinTicket
// validation with the real CSR and host-key parsers, fed mutations of real requests (openssl
// kubelet CSRs, mutated as DER). Only JoinError and the parsers' typed errors may escape.
describe('foreign-exception gate: IssueJoinTicket request validation', () => {
  it('mutated join requests are accepted or refused with a typed error, never another exception', async () => {
    const request = (certificateRequest: Buffer) =>
      Buffer.from(
        JSON.stringify(
          joinpb.IssueJoinTicketRequest.toJSON({
            diskUuid: '8b4d6f1e-2c3a-4b5d-9e7f-0a1b2c3d4e5f',
            certificateRequest,
            isControlPlane: false,
            hostPublicKey: sshCaFromSeed(Buffer.alloc(32, 3)).publicWire,
            hostCertificatePrincipals: ['10.0.0.5', 'worker-1'],
          }),
        ),
      );
    const target: FuzzTarget = {
      name: 'request.join',
      parser: 'parseJoinRequest with the production CSR and host-key parsers (apps/joinservice)',
      seeds: opensslKubeletCsrs().map(({ name, der }) => ({ name, bytes: request(der) })),
      runs: 3000,
      shape: { json: true },
      run: (b) => {
        const req = protoFromJson(b, joinpb.IssueJoinTicketRequest);
        return req === NOT_REACHED ? req : parseJoinRequest(req);
      },
    };
    const report = await runGate([target], { out: join(WORKSPACE_ROOT, '.test-results', 'fuzz-gate-joinservice.json') });
    for (const f of report.findings) console.log(`[fuzz-gate] FOREIGN in ${f.target} (${f.parser}), from ${f.seed}, input #${f.index}: ${f.error}\n${f.stack}\ninput (hex): ${f.inputHex}`);
    console.log(`[fuzz-gate] joinservice: ${report.inputs} inputs tried, ${report.foreign} foreign exceptions, ${report.seconds} s`);
    assert.ok(report.targets[0]!.accepted >= 2, 'the real requests are accepted');
    assert.equal(report.foreign, 0);
  });
});
