import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { missingComponent } from '@asterism/testing';
import { akTemplateRsa, decodePublic, encodePublic, publicKeyObject, range } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, tpm2ToolsAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import type { AzureSevSnpConfig, SevSnpConfig } from '../config/types.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import type { Measurement } from '../measurements/measurement.js';
import { Measurements } from '../measurements/measurements.js';
import { decodeDocument } from '../vtpm/document.js';
import { AwsSevSnpIssuer, AwsSevSnpValidator } from '../variants/aws-sev-snp.js';
import { AzureSevSnpIssuer, AzureSevSnpValidator } from '../variants/azure-sev-snp.js';
import { CERT_TABLE_GUID, encodeCertTable } from './cert-table.js';
import { certificateBytes } from './certs.js';
import { SnpCollateral } from './collateral.js';
import { ConfigfsTsmReportSource, type ExtendedReport } from './configfs-tsm.js';
import { GceMetadataClient, type GceShieldedIdentitySource } from './gce.js';
import { GCE_AK_TEMPLATE_NV_INDEX_RSA, GcpSevSnpIssuer, GcpSevSnpValidator } from '../variants/gcp-sev-snp.js';
import { AZURE_AK_HANDLE, AZURE_HCL_REPORT_NV_INDEX, encodeHclReport } from './hcl.js';
import { decodeSnpInstanceInfo } from './instance-info.js';
import { AZURE_VECTOR_TIME, buildReport, goldenSnp, signReport, TestAmdRoot, type TestCert } from './golden-vectors.fixture.js';
import { FakeConfigfsTsm, replayFirmware } from '../tsm/configfs-tsm.fixture.js';

const skip = swtpmAvailable() && tpm2ToolsAvailable() ? false : missingComponent('swtpm + tpm2-tools', SWTPM_INSTALL_HINT);
const run = promisify(execFile);
const USER_DATA = Buffer.from('node join');
/** The TCB the synthetic firmware reports and the configs require. */
const TCB = { bootloader: 4, tee: 0, snp: 21, microcode: 211 };

/** A copy of `d` whose first byte differs (setting a fixed value would equal it 1 time in 256). */
const flipFirstByte = (d: Buffer): Buffer => {
  const c = Buffer.from(d);
  c[0] = c[0]! ^ 0xff;
  return c;
};

const refusedWith = (code: string, re?: RegExp) => (e: unknown) => {
  assert.ok(e instanceof AttestationError, `expected AttestationError, got ${String(e)}`);
  assert.equal(e.code, code, e.message);
  if (re) assert.match(e.message, re);
  return true;
};

/** Runs a tpm2-tools command against swtpm (the shared client connection is closed first). */
async function tool(tpm: Swtpm, cmd: string, args: string[]): Promise<void> {
  await tpm.disconnect();
  await run(cmd, args, { env: { ...process.env, TPM2TOOLS_TCTI: tpm.tcti } });
}

/** tpm2_nvdefine + tpm2_nvwrite of `data` at `index` (owner read/write). */
async function writeNv(tpm: Swtpm, dir: string, index: number, data: Buffer): Promise<void> {
  const file = join(dir, `nv-${index.toString(16)}.bin`);
  writeFileSync(file, data);
  const hex = `0x${index.toString(16)}`;
  await tool(tpm, 'tpm2_nvdefine', [hex, '-C', 'o', '-s', String(data.length), '-a', 'ownerread|ownerwrite|authread|authwrite']);
  await tool(tpm, 'tpm2_nvwrite', [hex, '-C', 'o', '-i', file]);
}

/** Enforces the swtpm's current SHA-256 PCRs. */
async function currentMeasurements(tpm: Swtpm): Promise<Measurements> {
  const m = new Measurements();
  for (const [i, v] of await (await tpm.client()).pcrRead(range(24))) m.set(i, { expected: v, validationOpt: 'Enforce' } as Measurement);
  return m;
}

function snpConfig<V extends 'aws-sev-snp' | 'gcp-sev-snp'>(variant: V, root: TestAmdRoot, measurements: Measurements): SevSnpConfig {
  return {
    variant,
    measurements,
    bootloaderVersion: { value: TCB.bootloader, wantLatest: false },
    teeVersion: { value: TCB.tee, wantLatest: false },
    snpVersion: { value: TCB.snp, wantLatest: false },
    microcodeVersion: { value: TCB.microcode, wantLatest: false },
    amdRootKey: root.ark.der,
    amdSigningKey: null,
  };
}

/** A local HTTP server answering GETs from a path table (loopback only). */
async function serve(routes: Record<string, { status?: number; body: string; header?: [string, string] }>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (!route || (route.header && req.headers[route.header[0].toLowerCase()] !== route.header[1])) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(route.status ?? 200, { 'content-type': 'application/json' }).end(route.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('aws-sev-snp and gcp-sev-snp issuers on swtpm + a configfs-tsm directory -> validators', { skip }, () => {
  let tpm: Swtpm;
  let dir: string;
  let root: TestAmdRoot;
  let vlek: TestCert;
  let vcek: TestCert;
  let metadata: { url: string; server: Server };

  before(async () => {
    tpm = await startSwtpm();
    dir = mkdtempSync(join(tmpdir(), 'snp-issuers-'));
    root = await TestAmdRoot.create();
    vlek = await root.issue('vlek', { tcb: TCB, cspId: 'CN=test-csp' });
    vcek = await root.issue('vcek', { tcb: TCB });
    // GCE keeps the AK template in NV; the GCP issuer creates its AK from it.
    await writeNv(tpm, dir, GCE_AK_TEMPLATE_NV_INDEX_RSA, encodePublic(akTemplateRsa()));
    metadata = await serve({
      '/computeMetadata/v1/project/project-id': { body: 'asterism-test\n', header: ['Metadata-Flavor', 'Google'] },
      '/computeMetadata/v1/instance/zone': { body: 'projects/1234/zones/europe-west3-a', header: ['Metadata-Flavor', 'Google'] },
      '/computeMetadata/v1/instance/name': { body: 'node-1', header: ['Metadata-Flavor', 'Google'] },
    });
  });
  after(async () => {
    await tpm?.stop();
    metadata?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Firmware signing with the VLEK (AWS) or VCEK (GCP); its cert table carries the signer (and ASK for GCP). */
  const awsFirmware = (reportData: Buffer): ExtendedReport => ({
    report: signReport(buildReport({ signingKey: 1, reportData, tcb: TCB, chipId: Buffer.alloc(64) }), vlek.privateKey),
    certTable: encodeCertTable([[CERT_TABLE_GUID.vlek, vlek.der]]),
  });
  const gcpFirmware = (reportData: Buffer): ExtendedReport => ({
    report: signReport(buildReport({ signingKey: 0, reportData, tcb: TCB }), vcek.privateKey),
    certTable: encodeCertTable([
      [CERT_TABLE_GUID.vcek, vcek.der],
      [CERT_TABLE_GUID.ask, root.ask.der],
    ]),
  });

  it('aws-sev-snp: issue -> validate returns the user data (REPORT_DATA = SHA-512(AK SPKI), VLEK, ASVK from the cert cache)', async () => {
    const tsm = new FakeConfigfsTsm(join(dir, 'tsm-aws'), awsFirmware);
    const issuer = new AwsSevSnpIssuer(() => tpm.client(), new ConfigfsTsmReportSource(tsm.root, tsm));
    const nonce = randomBytes(32);
    const raw = await issuer.issue(USER_DATA, nonce);
    assert.equal(tsm.requests.length, 1);
    assert.equal(tsm.requests[0]!.vmpl, 0);
    const info = decodeSnpInstanceInfo(decodeDocument(raw).instanceInfo);
    assert.match(info.reportSigner.toString(), /^-----BEGIN CERTIFICATE-----/);
    assert.equal(info.certChain.length, 0);
    const validator = new AwsSevSnpValidator(snpConfig('aws-sev-snp', root, await currentMeasurements(tpm)), NOP_ATTESTATION_LOGGER, {
      collateral: new SnpCollateral({ offline: true }),
      cachedSigningKeys: [root.asvk.pem],
    });
    assert.deepEqual(Buffer.from(await validator.validate(raw, nonce)), USER_DATA);

    // Without the ASVK (no cache, offline KDS) the VLEK cannot be chained.
    const noAsk = new AwsSevSnpValidator(snpConfig('aws-sev-snp', root, await currentMeasurements(tpm)), NOP_ATTESTATION_LOGGER, { collateral: new SnpCollateral({ offline: true }) });
    await assert.rejects(noAsk.validate(raw, nonce), refusedWith('COLLATERAL_UNAVAILABLE'));
  });

  it('aws-sev-snp refusals: REPORT_DATA of another key, a VLEK of another root, a VLEK-less cert table', async () => {
    const measurements = await currentMeasurements(tpm);
    const validator = new AwsSevSnpValidator(snpConfig('aws-sev-snp', root, measurements), NOP_ATTESTATION_LOGGER, {
      collateral: new SnpCollateral({ offline: true }),
      cachedSigningKeys: [root.asvk.pem],
    });
    const other = await TestAmdRoot.create();
    const foreignVlek = await other.issue('vlek', { tcb: TCB });
    const cases: Array<[string, (d: Buffer) => ExtendedReport, string, RegExp]> = [
      ['REPORT_DATA is not SHA-512 of this AK', (d) => awsFirmware(flipFirstByte(d)), 'REPORT_DATA_MISMATCH', /SHA-512 of the attestation key/],
      [
        'VLEK issued under another ARK',
        (d) => ({ report: signReport(buildReport({ signingKey: 1, reportData: d, tcb: TCB, chipId: Buffer.alloc(64) }), foreignVlek.privateKey), certTable: encodeCertTable([[CERT_TABLE_GUID.vlek, foreignVlek.der]]) }),
        'CERT_CHAIN_INVALID',
        /./,
      ],
    ];
    for (const [name, firmware, code, re] of cases) {
      const tsm = new FakeConfigfsTsm(join(dir, `tsm-aws-${code}`), firmware);
      const nonce = randomBytes(32);
      const raw = await new AwsSevSnpIssuer(() => tpm.client(), new ConfigfsTsmReportSource(tsm.root, tsm)).issue(USER_DATA, nonce);
      await assert.rejects(validator.validate(raw, nonce), (e: unknown) => refusedWith(code, re)(e), name);
    }
    const noVlek = new FakeConfigfsTsm(join(dir, 'tsm-aws-novlek'), (d) => ({ ...awsFirmware(d), certTable: Buffer.alloc(0) }));
    await assert.rejects(new AwsSevSnpIssuer(() => tpm.client(), new ConfigfsTsmReportSource(noVlek.root, noVlek)).issue(USER_DATA, randomBytes(32)), refusedWith('ISSUER_FAILED', /no VLEK/));
  });

  it('gcp-sev-snp: issue -> validate (REPORT_DATA = extraData zero-padded, AK from the GCE shielded identity); wrong identity key, no identity source and a replayed report are refused', async () => {
    const tsm = new FakeConfigfsTsm(join(dir, 'tsm-gcp'), gcpFirmware);
    const issuer = new GcpSevSnpIssuer(() => tpm.client(), new ConfigfsTsmReportSource(tsm.root, tsm), new GceMetadataClient(metadata.url));
    const nonce = randomBytes(32);
    const raw = await issuer.issue(USER_DATA, nonce);
    const doc = decodeDocument(raw);
    const info = decodeSnpInstanceInfo(doc.instanceInfo);
    assert.deepEqual(info.gcp, { projectId: 'asterism-test', zone: 'europe-west3-a', instanceName: 'node-1', projectNumber: 0n, instanceId: 0n });
    // REPORT_DATA: 32 bytes of extraData, then zeros.
    assert.deepEqual(tsm.requests[0]!.reportData.subarray(32), Buffer.alloc(32));
    const ak = publicKeyObject(decodePublic(doc.attestation!.akPub));
    const identity = (key: KeyObject): GceShieldedIdentitySource => ({
      signingKey: async (i) => {
        assert.equal(i.instanceName, 'node-1');
        return key;
      },
    });
    const measurements = await currentMeasurements(tpm);
    const validator = (gceIdentity?: GceShieldedIdentitySource) =>
      new GcpSevSnpValidator(snpConfig('gcp-sev-snp', root, measurements), NOP_ATTESTATION_LOGGER, { collateral: new SnpCollateral({ offline: true }), ...(gceIdentity ? { gceIdentity } : {}) });
    assert.deepEqual(Buffer.from(await validator(identity(ak)).validate(raw, nonce)), USER_DATA);

    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    await assert.rejects(validator(identity(otherKey)).validate(raw, nonce), refusedWith('AK_MISMATCH', /not the GCE signing key of asterism-test\/europe-west3-a\/node-1/));
    await assert.rejects(validator().validate(raw, nonce), refusedWith('AK_UNTRUSTED', /no GCE shielded-identity source/));

    // The recorded report/auxblob replayed for a new nonce: bound to the old extraData.
    const first = gcpFirmware(tsm.requests[0]!.reportData);
    const replay = new FakeConfigfsTsm(join(dir, 'tsm-gcp-replay'), replayFirmware(first));
    const nonce2 = randomBytes(32);
    const replayed = await new GcpSevSnpIssuer(() => tpm.client(), new ConfigfsTsmReportSource(replay.root, replay), new GceMetadataClient(metadata.url)).issue(USER_DATA, nonce2);
    await assert.rejects(validator(identity(ak)).validate(replayed, nonce2), refusedWith('REPORT_DATA_MISMATCH', /extraData/));
  });
});

describe('azure-sev-snp issuer on swtpm with the real HCL report in NV 0x01400001 and an AK at 0x81000003', { skip }, () => {
  const golden = goldenSnp();
  let tpm: Swtpm;
  let dir: string;
  let thim: { url: string; server: Server };

  before(async () => {
    tpm = await startSwtpm();
    dir = mkdtempSync(join(tmpdir(), 'snp-azure-'));
    // The HCL report as Azure writes it: HCL header, the real SNP report + IGVM request header
    // (testdata/snp/attestation.bin), the real runtime data.
    const header = encodeHclReport(golden.azureReport, golden.runtimeData).subarray(0, 32);
    const hcl = Buffer.concat([header, golden.azureReport, golden.azureHclHeader, golden.runtimeData]);
    await writeNv(tpm, dir, AZURE_HCL_REPORT_NV_INDEX, hcl);
    const ctx = join(dir, 'ak.ctx');
    await tool(tpm, 'tpm2_createprimary', ['-C', 'o', '-G', 'rsa2048:rsassa-sha256:null', '-a', 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign', '-c', ctx]);
    await tool(tpm, 'tpm2_evictcontrol', ['-C', 'o', '-c', ctx, `0x${AZURE_AK_HANDLE.toString(16)}`]);
    await tool(tpm, 'tpm2_flushcontext', ['-t']);
    thim = await serve({
      '/metadata/THIM/amd/certification': { body: JSON.stringify({ vcekCert: golden.vcekPem, certificateChain: golden.certChainPem }), header: ['Metadata', 'true'] },
    });
  });
  after(async () => {
    await tpm?.stop();
    thim?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const config = (measurements: Measurements): AzureSevSnpConfig => ({
    variant: 'azure-sev-snp',
    measurements,
    bootloaderVersion: { value: 2, wantLatest: false },
    teeVersion: { value: 0, wantLatest: false },
    snpVersion: { value: 6, wantLatest: false },
    microcodeVersion: { value: 93, wantLatest: false },
    amdRootKey: certificateBytes(golden.arkPem, 'ARK'),
    amdSigningKey: null,
    firmwareSignerConfig: { acceptedKeyDigests: [Buffer.from(golden.azureReport.subarray(0xe0, 0xe0 + 48))], enforcementPolicy: 'Equal', maaURL: '' },
  });

  it('produces a document the validator decodes: real report + THIM VCEK pass, the software AK is (correctly) not the HCL AK', async () => {
    const issuer = new AzureSevSnpIssuer(() => tpm.client(), { imdsBaseUrl: thim.url });
    const nonce = randomBytes(32);
    const raw = await issuer.issue(USER_DATA, nonce);
    const doc = decodeDocument(raw);
    const persisted = await (await tpm.client()).readPublic(AZURE_AK_HANDLE);
    assert.deepEqual(doc.attestation!.akPub, persisted.publicBytes, 'ak_pub is the persisted AK');
    assert.ok(doc.attestation!.quotes.length >= 2, 'quotes of every bank');
    const info = decodeSnpInstanceInfo(doc.instanceInfo);
    assert.deepEqual(info.attestationReport, golden.azureReport);
    assert.deepEqual(info.azure!.runtimeData, golden.runtimeData);
    assert.equal(info.reportSigner.toString(), golden.vcekPem);
    assert.equal(info.certChain.toString(), golden.certChainPem);
    // Validation passes the SNP report, the VCEK chain to ARK-Milan, REPORT_DATA == SHA-256(runtime
    // data) and the ID key digest; it cannot pass "HCL AK == AK": the runtime data names Azure's
    // hardware-bound HCL AK and a software TPM cannot hold that key.
    const validator = new AzureSevSnpValidator(config(await currentMeasurements(tpm)), NOP_ATTESTATION_LOGGER, {
      collateral: new SnpCollateral({ offline: true }),
      now: () => AZURE_VECTOR_TIME,
    });
    await assert.rejects(validator.validate(raw, nonce), refusedWith('AK_MISMATCH', /runtime data key modulus is not the attestation key/));
  });

  it('THIM failing is ISSUER_FAILED naming THIM; a missing HCL NV index is ISSUER_FAILED', async () => {
    const down = await serve({});
    try {
      await assert.rejects(new AzureSevSnpIssuer(() => tpm.client(), { imdsBaseUrl: down.url }).issue(USER_DATA, randomBytes(32)), refusedWith('ISSUER_FAILED', /THIM.*HTTP 404/));
    } finally {
      down.server.close();
    }
    const empty = await startSwtpm();
    try {
      const ctx = join(dir, 'ak2.ctx');
      await tool(empty, 'tpm2_createprimary', ['-C', 'o', '-G', 'rsa2048:rsassa-sha256:null', '-a', 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign', '-c', ctx]);
      await tool(empty, 'tpm2_evictcontrol', ['-C', 'o', '-c', ctx, `0x${AZURE_AK_HANDLE.toString(16)}`]);
      await tool(empty, 'tpm2_flushcontext', ['-t']);
      await assert.rejects(new AzureSevSnpIssuer(() => empty.client(), { imdsBaseUrl: thim.url }).issue(USER_DATA, randomBytes(32)), refusedWith('ISSUER_FAILED'));
    } finally {
      await empty.stop();
    }
  });
});
