import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { TPM_ALG, type TpmClient, type TpmtPublic, encodePublic } from '@asterism/tpm';
import { defaultAttestationConfig, encodeAttestationConfig } from '../attestation-config.js';
import { validatorFromConfigJson, validatorVariants } from '../choose.js';
import { AttestationError as AttErr } from '../errors.js';
import { QemuTdxValidator } from './qemu-tdx.js';
import type { AzureTdxConfig } from '../config/types.js';
import { AttestationError } from '../errors.js';
import type { TdxQuoteVerifier } from '../tdx/quote-provider.js';
import { parseTdxQuote, type TdxQuote } from '../tdx/quote.js';
import { errorCode, tdxVector, VECTOR_OFFSETS, VECTOR_TIME, vectorCollateral } from '../tdx/vectors.fixture.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';
import { checkHclAkBinding } from '../azure/hcl-ak.js';
import { HCL_IGVM_HEADER_OFFSET, parseTdxHclReport } from '../azure/hcl-report.js';
import { checkAzureTdxPolicy } from '../azure/tdx-policy.js';
import { AzureTdxValidator, azureTdxInstanceInfo, azureTdxTrustedKey, decodeAzureTdxInstanceInfo, encodeAzureTdxInstanceInfo, ImdsTdQuoteClient } from './azure-tdx.js';

const hclBytes = readFileSync(new URL('../../../../testdata/tdx/hclreport.bin', import.meta.url));
const hcl = parseTdxHclReport(hclBytes);
const tdReportData = hcl.tdReport.subarray(128, 192);
const runtimeKey = (JSON.parse(hcl.runtimeData.toString('utf8')) as { keys: { n: string }[] }).keys[0]!;

function rsaAk(modulus: Buffer, exponent = 0): RsaPublic {
  return {
    type: TPM_ALG.RSA,
    nameAlg: TPM_ALG.SHA256,
    objectAttributes: 0x00050072,
    authPolicy: Buffer.alloc(0),
    rsa: { symmetric: { algorithm: TPM_ALG.NULL }, scheme: { scheme: TPM_ALG.RSASSA, hashAlg: TPM_ALG.SHA256 }, keyBits: 2048, exponent },
    modulus,
  } as RsaPublic;
}
type RsaPublic = Extract<TpmtPublic, { modulus: Buffer }>;
const hclAk = rsaAk(Buffer.from(runtimeKey.n, 'base64url'));


describe('checkHclAkBinding with the real Azure TDX HCL report', () => {
  const tampered = Buffer.from(hcl.runtimeData);
  tampered[100] = tampered[100]! ^ 1;
  const cases: { name: string; run: () => void; want: string }[] = [
    { name: 'the HCLAkPub key (exponent 0 = 65537) is bound by REPORT_DATA', run: () => checkHclAkBinding(hcl.runtimeData, tdReportData, hclAk), want: 'OK' },
    { name: 'explicit exponent 65537', run: () => checkHclAkBinding(hcl.runtimeData, tdReportData, rsaAk(hclAk.modulus, 65537)), want: 'OK' },
    { name: 'exponent 3', run: () => checkHclAkBinding(hcl.runtimeData, tdReportData, rsaAk(hclAk.modulus, 3)), want: 'AK_MISMATCH' },
    { name: 'another modulus', run: () => checkHclAkBinding(hcl.runtimeData, tdReportData, rsaAk(Buffer.alloc(256, 7))), want: 'AK_MISMATCH' },
    { name: 'a runtime data byte changed', run: () => checkHclAkBinding(tampered, tdReportData, hclAk), want: 'AK_UNTRUSTED' },
    { name: 'REPORT_DATA of another report', run: () => checkHclAkBinding(hcl.runtimeData, Buffer.alloc(64), hclAk), want: 'AK_UNTRUSTED' },
  ];
  for (const c of cases) it(`${c.name} -> ${c.want}`, () => assert.equal(errorCode(c.run), c.want));
});

describe('checkAzureTdxPolicy on the real quote', () => {
  const quote = parseTdxQuote(tdxVector('quote-v4-spr.dat'));
  const base = defaultAttestationConfig('azure-tdx') as AzureTdxConfig;
  const v = <T>(value: T) => ({ value, wantLatest: false });
  const cases: { name: string; patch: Partial<AzureTdxConfig>; want: string; field?: string }[] = [
    { name: 'unresolved "latest" placeholders check nothing', patch: {}, want: 'OK' },
    { name: 'exact values of the quote pass', patch: { teeTCBSVN: v(Buffer.from('03000400000000000000000000000000', 'hex')), qeVendorID: v(quote.header.qeVendorId), mrSeam: quote.body.mrSeam, xfam: v(quote.body.xfam) }, want: 'OK' },
    { name: 'QE SVN minimum 1 (quote 0)', patch: { qeSVN: v(1) }, want: 'TCB_TOO_LOW', field: 'qeSVN' },
    { name: 'PCE SVN minimum 1 (quote 0)', patch: { pceSVN: v(1) }, want: 'TCB_TOO_LOW', field: 'pceSVN' },
    { name: 'TEE TCB SVN minimum 3.0.5 (quote 3.0.4)', patch: { teeTCBSVN: v(Buffer.from('03000500000000000000000000000000', 'hex')) }, want: 'TCB_TOO_LOW', field: 'teeTCBSVN[2]' },
    { name: 'another QE vendor', patch: { qeVendorID: v(Buffer.alloc(16, 1)) }, want: 'POLICY_VIOLATION', field: 'qeVendorID' },
    { name: 'another MRSEAM', patch: { mrSeam: Buffer.alloc(48, 1) }, want: 'POLICY_VIOLATION', field: 'mrSeam' },
    { name: 'another XFAM', patch: { xfam: v(Buffer.alloc(8, 1)) }, want: 'POLICY_VIOLATION', field: 'xfam' },
  ];
  for (const c of cases) {
    it(`${c.name} -> ${c.want}`, () => {
      try {
        checkAzureTdxPolicy(quote, { ...base, ...c.patch });
        assert.equal('OK', c.want);
      } catch (err) {
        assert.ok(err instanceof AttestationError);
        assert.deepEqual([err.code, err.details.field], [c.want, c.field]);
      }
    });
  }
});

describe('azure-tdx trust decision and issuer pieces', () => {
  // A quote whose REPORT_DATA is the real HCL report's (only a stand-in verifier accepts it).
  const rebound = Buffer.from(tdxVector('quote-v4-spr.dat'));
  tdReportData.copy(rebound, VECTOR_OFFSETS.reportData);
  const trusting: TdxQuoteVerifier = { verify: (quote: TdxQuote) => ({ quote, fmspc: '', pckIssuer: '', tcb: { status: 'UpToDate', platformStatus: 'UpToDate', qeStatus: 'UpToDate', moduleStatus: undefined, tcbDate: '', advisoryIds: [] } }) };
  const source = { collateral: async () => vectorCollateral() };
  const config = defaultAttestationConfig('azure-tdx') as AzureTdxConfig;
  const doc = (akPub: TpmtPublic, quote: Buffer = rebound): VtpmAttestationDocument =>
    ({ attestation: { akPub: encodePublic(akPub) }, instanceInfo: encodeAzureTdxInstanceInfo({ attestationReport: quote, runtimeData: hcl.runtimeData }), userData: Buffer.alloc(0) }) as unknown as VtpmAttestationDocument;

  it('trusts the HCL AK when quote, policy and binding hold', async () => {
    const ak = await azureTdxTrustedKey(doc(hclAk), { config, collateral: source, verifier: trusting });
    assert.deepEqual(ak.type === TPM_ALG.RSA && ak.modulus, hclAk.modulus);
  });
  const cases: { name: string; run: () => Promise<unknown>; want: string }[] = [
    { name: 'a substituted AK', run: () => azureTdxTrustedKey(doc(rsaAk(Buffer.alloc(256, 3))), { config, collateral: source, verifier: trusting }), want: 'AK_MISMATCH' },
    { name: 'the real DCAP verifier on the re-bound quote', run: () => azureTdxTrustedKey(doc(hclAk), { config, collateral: source, clock: () => VECTOR_TIME }), want: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'the real quote with the real verifier (REPORT_DATA not the HCL one; TCB below every level)', run: () => azureTdxTrustedKey(doc(hclAk, tdxVector('quote-v4-spr.dat')), { config, collateral: source, clock: () => VECTOR_TIME }), want: 'TCB_LEVEL_NOT_FOUND' },
    { name: 'a policy minimum', run: () => azureTdxTrustedKey(doc(hclAk), { config: { ...config, qeSVN: { value: 9, wantLatest: false } }, collateral: source, verifier: trusting }), want: 'TCB_TOO_LOW' },
    { name: 'no instance info', run: () => azureTdxTrustedKey({ ...doc(hclAk), instanceInfo: null }, { config, collateral: source, verifier: trusting }), want: 'QUOTE_MISSING' },
  ];
  for (const c of cases) it(`refuses ${c.name} -> ${c.want}`, () => assert.rejects(c.run(), (err: AttestationError) => err instanceof AttestationError && err.code === c.want));

  it('the issuer reads the HCL report from NV 0x01400001 and asks the local quote endpoint (POST /acc/tdquote)', async () => {
    const requests: { method?: string; type?: string; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        requests.push({ method: req.method, type: req.headers['content-type'], body });
        const report = Buffer.from((JSON.parse(body) as { report: string }).report, 'base64url');
        if (report.length !== 1024) return res.writeHead(400).end();
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ quote: createHash('sha256').update(report).digest().toString('base64url') }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const nvReads: number[] = [];
      const tpm = { nvRead: async (i: number) => (nvReads.push(i), hclBytes) } as unknown as TpmClient;
      const info = decodeAzureTdxInstanceInfo(await azureTdxInstanceInfo(tpm, new ImdsTdQuoteClient(base)));
      assert.deepEqual(nvReads, [0x01400001]);
      assert.deepEqual(info.attestationReport, createHash('sha256').update(hcl.tdReport).digest());
      assert.deepEqual(info.runtimeData, hcl.runtimeData);
      assert.deepEqual([requests[0]!.method, requests[0]!.type], ['POST', 'application/json']);
      const snp = Buffer.from(hclBytes);
      snp.writeUInt32LE(2, HCL_IGVM_HEADER_OFFSET + 8);
      await assert.rejects(azureTdxInstanceInfo({ nvRead: async () => snp } as unknown as TpmClient, new ImdsTdQuoteClient(base)), (err: AttestationError) => err.code === 'REPORT_INVALID');
      await assert.rejects(new ImdsTdQuoteClient(base).quote(Buffer.alloc(10)), /HTTP 400/);
    } finally {
      server.close();
    }
  });
});

describe('TDX validators in the variant table', () => {
  it('with the process\'s collateral source (deps.tdx, intel-pcs) both variants are constructible from their config JSON; without it CONFIG_INVALID names the source', () => {
    const tdx = { collateral: { collateral: async () => vectorCollateral() } };
    assert.ok(validatorVariants().includes('qemu-tdx') && validatorVariants().includes('azure-tdx'));
    const json = (v: string) => encodeAttestationConfig(defaultAttestationConfig(v));
    assert.ok(validatorFromConfigJson(json('azure-tdx'), 'azure-tdx', undefined, { tdx }) instanceof AzureTdxValidator);
    assert.ok(validatorFromConfigJson(json('qemu-tdx'), 'qemu-tdx', undefined, { tdx }) instanceof QemuTdxValidator);
    for (const v of ['azure-tdx', 'qemu-tdx']) {
      assert.throws(() => validatorFromConfigJson(json(v), v), (e: unknown) => e instanceof AttErr && e.code === 'CONFIG_INVALID' && e.message.includes(v) && e.message.includes('intel-pcs'));
    }
  });
});
