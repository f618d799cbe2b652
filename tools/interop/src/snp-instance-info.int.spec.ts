/**
 * SEV-SNP instance info against Go's encoding/json (tools/interop/go-snp, a struct written from
 * docs/protocol/sev-snp.md §7): Go decodes our bytes and re-encodes them identically, and we
 * decode Go's bytes to the same values (uint64 extremes, HTML escaping, nil vs empty).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { decodeSnpInstanceInfo, encodeSnpInstanceInfo, type SnpInstanceInfo } from '@asterism/attestation';
import { missingComponent, WORKSPACE_ROOT } from '@asterism/testing';
import { buildGoBinary, haveGo } from './go-peer.js';

const skip = (await haveGo()) ? false : missingComponent('go', 'a Go toolchain on PATH');

function goRun(bin: string, cmd: string, input = ''): Promise<Buffer> {
  return new Promise((res, rej) => {
    const child = execFile(bin, [cmd], { encoding: 'buffer', timeout: 30_000 }, (err, stdout, stderr) => (err ? rej(new Error(`${err.message}: ${stderr.toString()}`)) : res(stdout)));
    // A command that reads no input may exit before the pipe is written: its exit status decides,
    // so a write EPIPE on stdin is not a test failure.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input);
  });
}

const testdata = (p: string) => readFileSync(resolve(WORKSPACE_ROOT, 'testdata', p));

describe('SNP instance info and Go encoding/json', { skip }, () => {
  let bin: string;
  before(async () => {
    bin = await buildGoBinary(join(import.meta.dirname, '..', 'go-snp'), 'snp-instance-info');
  });

  const cases: Array<[string, SnpInstanceInfo]> = [
    [
      'azure-sev-snp (real report, VCEK, chain, runtime data)',
      {
        reportSigner: testdata('snp/vcek.pem'),
        certChain: testdata('snp/certchain.pem'),
        attestationReport: testdata('snp/attestation.bin').subarray(0, 0x4a0),
        azure: { runtimeData: testdata('snp/runtimedata.bin'), maaToken: 'eyJ<&>' },
        gcp: null,
      },
    ],
    ['aws-sev-snp (VLEK, no chain: Go nil)', { reportSigner: testdata('snp/vlek.pem'), certChain: Buffer.alloc(0), attestationReport: Buffer.alloc(0x4a0, 7), azure: null, gcp: null }],
    [
      'gcp-sev-snp (uint64 extremes, omitted zeros)',
      {
        reportSigner: Buffer.alloc(0),
        certChain: Buffer.alloc(0),
        attestationReport: Buffer.alloc(0x4a0, 1),
        azure: null,
        gcp: { zone: 'us-central1-a', projectId: 'proj', projectNumber: 18446744073709551615n, instanceName: 'n', instanceId: 0n },
      },
    ],
  ];
  for (const [name, info] of cases) {
    it(`${name}: Go decodes our bytes and re-encodes them byte for byte`, async () => {
      const ours = encodeSnpInstanceInfo(info);
      assert.equal((await goRun(bin, 'roundtrip', ours.toString())).toString(), ours.toString());
      assert.deepEqual(decodeSnpInstanceInfo(ours), info);
    });
  }

  it("we decode Go's encoding of sample values, and our re-encoding is Go's bytes", async () => {
    const go = await goRun(bin, 'sample');
    const info = decodeSnpInstanceInfo(go);
    assert.equal(info.reportSigner.toString(), '-----BEGIN CERTIFICATE-----\nVLEK\n-----END CERTIFICATE-----\n');
    assert.equal(info.certChain.length, 0);
    assert.deepEqual(info.attestationReport, Buffer.from([0, 1, 2, 0xfe, 0xff]));
    assert.deepEqual(info.azure, { runtimeData: Buffer.from('{"keys":[]}'), maaToken: 'a<b>&c' });
    assert.deepEqual(info.gcp, { zone: 'europe-west3-a', projectId: 'p', projectNumber: 18446744073709551615n, instanceName: 'node-1', instanceId: 0n });
    assert.equal(encodeSnpInstanceInfo(info).toString(), go.toString());
  });
});
