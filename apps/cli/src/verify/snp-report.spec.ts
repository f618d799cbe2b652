import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { AttestationError, defaultAttestationConfig, encodeDocument, encodeSnpInstanceInfo } from '@asterism/attestation';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { formatSnpReport, snpReportOf } from './snp-report.js';
import { renderRunningNode } from './verify-endpoint.js';

const report = readFileSync(resolve(WORKSPACE_ROOT, 'testdata/snp/attestation.bin')).subarray(0, 0x4a0);

function snpDocument(): Buffer {
  const info = encodeSnpInstanceInfo({ reportSigner: Buffer.alloc(0), certChain: Buffer.alloc(0), attestationReport: Buffer.from(report), azure: null, gcp: null });
  return encodeDocument({ attestation: null, instanceInfo: info, userData: Buffer.alloc(0) });
}

describe('asterism verify: SEV-SNP report', () => {
  const r = snpReportOf(snpDocument())!;

  it('finds the report in an SNP document and prints policy, VMPL, the four TCBs, measurement, ID key digest and chip id (real Azure report)', () => {
    const text = formatSnpReport(r, undefined);
    assert.match(text, /version {8}2, product Milan, signed by VCEK/);
    assert.match(text, /policy {9}0x00000000000[0-9a-f]{5} \(ABI \d+\.\d+/);
    assert.match(text, /VMPL {11}0/);
    for (const label of ['current', 'reported', 'committed', 'launch']) assert.match(text, new RegExp(`${label} TCB +bl2 tee0 snp6 ucode93`));
    assert.ok(text.includes(`measurement    ${report.subarray(0x90, 0xc0).toString('hex')}`));
    assert.ok(text.includes(`ID key digest  ${report.subarray(0xe0, 0x110).toString('hex')}`));
    assert.ok(text.includes(`chip id        ${report.subarray(0x1a0, 0x1e0).toString('hex')}`));
    assert.match(text, /SNP: not validated/);
    assert.equal(snpReportOf(Buffer.from('{"Attestation":null,"InstanceInfo":null,"UserData":null}')), undefined);
  });

  it('prints the failing check with its code and fields, or that the checks passed', () => {
    const err = new AttestationError('TCB_TOO_LOW', 'LAUNCH_TCB bl2 tee0 snp6 ucode93 is lower than the policy minimum launch TCB bl2 tee0 snp6 ucode94 (microcode: 93 vs 94)', {
      details: { field: 'LAUNCH_TCB', component: 'microcode', expected: 94, actual: 93 },
    });
    assert.match(formatSnpReport(r, { ok: false, error: err }), /SNP: failing check TCB_TOO_LOW: LAUNCH_TCB .* \{"field":"LAUNCH_TCB","component":"microcode","expected":94,"actual":93\}$/);
    assert.match(formatSnpReport(r, { ok: true }), /SNP: report, certificate chain and TCB checks passed$/);
  });
});

describe('asterism verify: current-generation SNP reports (mitigation vectors, Turin TCB)', () => {
  it('a version 2 report says it has no mitigation vectors', () => {
    const text = formatSnpReport(snpReportOf(snpDocument())!, undefined);
    assert.match(text, /launch mitigations {3}\(none: report version 2 < 5\)\n {2}current mitigations {2}\(none: report version 2 < 5\)/);
  });

  it('the real Turin report (version 5): product Turin, FMC in every TCB, both mitigation vectors', () => {
    const turin = readFileSync(resolve(WORKSPACE_ROOT, 'testdata/snp/turin-report-v5.bin'));
    const info = encodeSnpInstanceInfo({ reportSigner: Buffer.alloc(0), certChain: Buffer.alloc(0), attestationReport: turin, azure: null, gcp: null });
    const text = formatSnpReport(snpReportOf(encodeDocument({ attestation: null, instanceInfo: info, userData: Buffer.alloc(0) }))!, { ok: true });
    assert.match(text, /version {8}5, product Turin, signed by VCEK/);
    for (const label of ['current', 'reported', 'committed', 'launch']) assert.match(text, new RegExp(`${label} TCB +fmc1 bl1 tee1 snp4 ucode81`));
    assert.match(text, /launch mitigations {3}0x000000000000003f\n {2}current mitigations {2}0x000000000000003f/);
  });
});

describe('asterism verify --endpoint table for an SNP node', () => {
  it('shows the SNP report and the failing check under the refusal', () => {
    const error = new AttestationError('ID_KEY_UNTRUSTED', 'report ID key not trusted', { details: { field: 'idKeyDigest' } });
    const text = renderRunningNode(
      { endpoint: '10.0.0.5:30081', document: snpDocument(), pcrs: undefined, tdMeasurements: undefined, attestation: { ok: false, error }, clusterId: undefined, accepted: false },
      defaultAttestationConfig('azure-sev-snp'),
      'table',
    );
    assert.match(text, /SEV-SNP report\n {2}version/);
    assert.match(text, /SNP: failing check ID_KEY_UNTRUSTED: report ID key not trusted \{"field":"idKeyDigest"\}\nNode 10\.0\.0\.5:30081 is refused: report ID key not trusted$/);
  });
});
