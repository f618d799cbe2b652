/**
 * azure-tdx issuer on a real swtpm: the HCL attestation key persisted at 0x81000003 and the HCL
 * report in NV 0x01400001, both put there with tpm2-tools the way Azure's vTPM holds them; the TD
 * quote comes from a loopback HTTP server replaying the IMDS `/acc/tdquote` shape.
 *
 * What a software TPM cannot reproduce (named by the tests below):
 * - the real 2600-byte HCL report does not fit one swtpm NV index (TPM_PT_NV_INDEX_MAX 2048 in
 *   libtpms 0.9): the NV holds the real header, TD report and IGVM header with a shorter runtime
 *   data JSON (the real `vm-configuration`, one key);
 * - the real runtime data names Azure's HCL AK, whose private key only Azure's vTPM has: with the
 *   software AK the binding check refuses it (AK_MISMATCH);
 * - Intel's quoting enclave signs the real quote over the real REPORT_DATA only: a quote re-bound
 *   to new runtime data fails the DCAP quote signature (QUOTE_SIGNATURE_INVALID), so the
 *   round trip uses a stand-in DCAP verifier, and the real verifier stops at the real quote's
 *   TCB (TCB_LEVEL_NOT_FOUND: its platform is below every level of the collateral).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { range, TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, tpm2ToolsAvailable, type Swtpm } from '@asterism/tpm/testing';
import { defaultAttestationConfig } from '../attestation-config.js';
import type { AzureTdxConfig } from '../config/types.js';
import { AttestationError } from '../errors.js';
import type { Measurement } from '../measurements/measurement.js';
import { Measurements } from '../measurements/measurements.js';
import type { TdxQuoteVerifier } from '../tdx/quote-provider.js';
import type { TdxQuote } from '../tdx/quote.js';
import { tdxVector, VECTOR_OFFSETS, VECTOR_TIME, vectorCollateral } from '../tdx/vectors.fixture.js';
import { decodeDocument } from '../vtpm/document.js';
import { HCL_IGVM_HEADER_OFFSET, HCL_REPORT_NV_INDEX, HCL_RUNTIME_DATA_OFFSET, parseTdxHclReport } from '../azure/hcl-report.js';
import { AzureTdxIssuer, AzureTdxValidator, decodeAzureTdxInstanceInfo, ImdsTdQuoteClient } from './azure-tdx.js';

const skip = !swtpmAvailable() || !tpm2ToolsAvailable() ? missingComponent('swtpm and tpm2-tools', SWTPM_INSTALL_HINT) : false;

const AK_HANDLE = 0x81000003;
const realHcl = readFileSync(new URL('../../../../testdata/tdx/hclreport.bin', import.meta.url));
const realRuntime = JSON.parse(parseTdxHclReport(realHcl).runtimeData.toString('utf8')) as { keys: Record<string, string>[]; 'vm-configuration': unknown };
/** Offset of REPORT_DATA in a TDREPORT_STRUCT (REPORTMACSTRUCT.reportdata). */
const TD_REPORT_DATA_OFFSET = 128;

/**
 * The real HCL report with another runtime data JSON: size fields patched, and the TD report's
 * REPORT_DATA set to SHA-256(runtime data) as the HCL would have asked the TDX module.
 */
function hclWithRuntimeData(runtime: Buffer): Buffer {
  const out = Buffer.concat([realHcl.subarray(0, HCL_RUNTIME_DATA_OFFSET), runtime]);
  out.writeUInt32LE(out.length, 8);
  out.writeUInt32LE(20 + runtime.length, HCL_IGVM_HEADER_OFFSET);
  out.writeUInt32LE(runtime.length, HCL_IGVM_HEADER_OFFSET + 16);
  const reportData = Buffer.concat([createHash('sha256').update(runtime).digest(), Buffer.alloc(32)]);
  reportData.copy(out, 32 + TD_REPORT_DATA_OFFSET);
  return out;
}

const runtimeJson = (key: Record<string, string>) => Buffer.from(JSON.stringify({ keys: [key], 'vm-configuration': realRuntime['vm-configuration'] }));

/** Loopback `/acc/tdquote`: answers the real quote, re-bound to the posted TD report's REPORT_DATA if `rebind()`. */
async function startQuoteEndpoint(reports: Buffer[], rebind: () => boolean): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const report = Buffer.from((JSON.parse(body) as { report: string }).report, 'base64url');
      reports.push(report);
      if (req.method !== 'POST' || req.url !== '/acc/tdquote' || report.length !== 1024) return res.writeHead(400).end();
      const quote = Buffer.from(tdxVector('quote-v4-spr.dat'));
      if (rebind()) report.copy(quote, VECTOR_OFFSETS.reportData, TD_REPORT_DATA_OFFSET, TD_REPORT_DATA_OFFSET + 64);
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ quote: quote.toString('base64url') }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('azure-tdx issuer on swtpm (AK 0x81000003, HCL report in NV 0x01400001 via tpm2-tools)', { skip }, () => {
  let tpm: Swtpm;
  let endpoint: { server: Server; base: string };
  const reports: Buffer[] = [];
  let rebind = true;
  let akKey: Record<string, string>;
  const tools = (args: string[]) => execFileSync(args[0]!, args.slice(1), { env: { ...process.env, TPM2TOOLS_TCTI: tpm.tcti }, stdio: 'pipe', timeout: 20_000 });

  /** Replaces NV 0x01400001 with `bytes` (tpm2-tools need the connection: ours is closed first). */
  async function writeNv(bytes: Buffer): Promise<void> {
    await tpm.disconnect();
    try {
      tools(['tpm2_nvundefine', '-C', 'o', `0x${HCL_REPORT_NV_INDEX.toString(16)}`]);
    } catch {
      // not defined yet
    }
    tools(['tpm2_nvdefine', `0x${HCL_REPORT_NV_INDEX.toString(16)}`, '-C', 'o', '-s', String(bytes.length), '-a', 'ownerread|ownerwrite|authread|authwrite']);
    const file = `${tpm.dir}/hcl.bin`;
    execFileSync('sh', ['-c', 'cat > "$1"', 'sh', file], { input: bytes });
    tools(['tpm2_nvwrite', `0x${HCL_REPORT_NV_INDEX.toString(16)}`, '-C', 'o', '-i', file]);
  }

  before(async () => {
    tpm = await startSwtpm();
    endpoint = await startQuoteEndpoint(reports, () => rebind);
    const ctx = `${tpm.dir}/ak.ctx`;
    await tpm.disconnect();
    tools(['tpm2_createprimary', '-C', 'o', '-G', 'rsa2048:rsassa-sha256:null', '-a', 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign', '-c', ctx]);
    tools(['tpm2_evictcontrol', '-C', 'o', '-c', ctx, `0x${AK_HANDLE.toString(16)}`]);
    const ak = await (await tpm.client()).readPublic(AK_HANDLE);
    assert.ok(ak.public.type === TPM_ALG.RSA);
    akKey = { kid: 'HCLAkPub', key_ops: 'sign', kty: 'RSA', e: 'AQAB', n: ak.public.modulus.toString('base64url') };
  });
  after(async () => {
    endpoint?.server.close();
    await tpm?.stop();
  });

  const issuer = () => new AzureTdxIssuer(() => tpm.client(), { quotes: new ImdsTdQuoteClient(endpoint.base) });
  const stillTrusting: TdxQuoteVerifier = { verify: (quote: TdxQuote) => ({ quote, fmspc: '50806f000000', pckIssuer: '', tcb: { status: 'UpToDate', platformStatus: 'UpToDate', qeStatus: 'UpToDate', moduleStatus: undefined, tcbDate: '', advisoryIds: [] } }) };
  async function validator(verifier?: TdxQuoteVerifier): Promise<AzureTdxValidator> {
    const measurements = new Measurements();
    for (const [i, v] of await (await tpm.client()).pcrRead(range(24))) measurements.set(i, { expected: v, validationOpt: 'Enforce' } as Measurement);
    const config: AzureTdxConfig = { ...(defaultAttestationConfig('azure-tdx') as AzureTdxConfig), measurements };
    return new AzureTdxValidator({ config, collateral: { collateral: async () => vectorCollateral() }, clock: () => VECTOR_TIME, ...(verifier ? { verifier } : {}) });
  }

  it('issues a document the validator decodes and accepts (stand-in DCAP verifier): AK from 0x81000003, TD report from NV, quote from the endpoint', async () => {
    const nv = hclWithRuntimeData(runtimeJson(akKey));
    assert.ok(nv.length <= 2048, `${nv.length} bytes fit one swtpm NV index`);
    await writeNv(nv);
    const nonce = randomBytes(32);
    const raw = await issuer().issue(Buffer.from('user data'), nonce);

    const doc = decodeDocument(raw);
    assert.deepEqual(doc.attestation!.akPub, (await (await tpm.client()).readPublic(AK_HANDLE)).publicBytes);
    const info = decodeAzureTdxInstanceInfo(doc.instanceInfo);
    assert.deepEqual(info.runtimeData, runtimeJson(akKey));
    assert.deepEqual(reports.at(-1), nv.subarray(32, 32 + 1024), 'the endpoint got the TD report from NV');
    assert.deepEqual(info.attestationReport.subarray(VECTOR_OFFSETS.reportData, VECTOR_OFFSETS.reportData + 32), createHash('sha256').update(info.runtimeData).digest());

    const out = await (await validator(stillTrusting)).validate(raw, nonce);
    assert.equal(Buffer.from(out).toString(), 'user data');
    await assert.rejects((await validator(stillTrusting)).validate(raw, randomBytes(32)), (e: AttestationError) => e.code === 'NONCE_MISMATCH');
  });

  it('the real DCAP verifier refuses the re-bound quote: QUOTE_SIGNATURE_INVALID (only Intel QE signs a new REPORT_DATA)', async () => {
    await writeNv(hclWithRuntimeData(runtimeJson(akKey)));
    const nonce = randomBytes(32);
    const raw = await issuer().issue(Buffer.from('u'), nonce);
    await assert.rejects((await validator()).validate(raw, nonce), (e: AttestationError) => e.code === 'QUOTE_SIGNATURE_INVALID');
  });

  it('the real DCAP verifier on the real quote (not re-bound) stops at its TCB: TCB_LEVEL_NOT_FOUND', async () => {
    await writeNv(hclWithRuntimeData(runtimeJson(akKey)));
    rebind = false;
    try {
      const nonce = randomBytes(32);
      const raw = await issuer().issue(Buffer.from('u'), nonce);
      await assert.rejects((await validator()).validate(raw, nonce), (e: AttestationError) => e.code === 'TCB_LEVEL_NOT_FOUND');
    } finally {
      rebind = true;
    }
  });

  it("the real HCLAkPub (Azure's AK) in the runtime data does not bind the software AK: AK_MISMATCH", async () => {
    await writeNv(hclWithRuntimeData(runtimeJson(realRuntime.keys[0]!)));
    const nonce = randomBytes(32);
    const raw = await issuer().issue(Buffer.from('u'), nonce);
    await assert.rejects((await validator(stillTrusting)).validate(raw, nonce), (e: AttestationError) => e.code === 'AK_MISMATCH' && e.details.check === 'ak-modulus');
  });

  it('an SNP-type HCL report in NV is refused by the issuer (REPORT_INVALID), no quote is requested', async () => {
    const snp = hclWithRuntimeData(runtimeJson(akKey));
    snp.writeUInt32LE(2, HCL_IGVM_HEADER_OFFSET + 8);
    await writeNv(snp);
    const before = reports.length;
    await assert.rejects(issuer().issue(Buffer.from('u'), randomBytes(32)), (e: AttestationError) => e.code === 'REPORT_INVALID' && e.details.reportType === 2);
    assert.equal(reports.length, before);
  });

  it('the real 2600-byte HCL report does not fit one swtpm NV index (TPM_PT_NV_INDEX_MAX 2048)', async () => {
    assert.equal(realHcl.length, 2600);
    await assert.rejects(writeNv(realHcl), /tpm2_nvdefine/);
  });
});
