// SEV-SNP report verification with warm collateral vs one bare node:crypto ECDSA P-384 verify of
// the same report, measured in the same run.
//
//   npx tsx tools/bench/src/snp-bench.ts            (env: N=300 ROUNDS=5)
//
// The candidate is what azure-sev-snp runs per node: SnpVerifier.verify (snpVerifierFor, as the
// validators build it) on the real Azure report with its VCEK and ASK/ARK chain (testdata/snp):
// report parse and product line, VCEK and chain (memoised by content, validity re-checked at the
// pinned time), VCEK extensions vs report (chip id, TCB), REPORT_DATA binding, policy and every
// TCB rule, report signature. Collateral is warm: offline cache, nothing fetched. The cold one is a
// new verifier per sample (certificates parsed and chain signatures checked again).
// The baseline is the report signature check every SNP verifier needs at minimum.
// Issue 28 adds the current-generation paths in the same run: the real Genoa report (version 3)
// and the real Turin report (version 5, Turin TCB layout, mitigation vectors, 8-byte HWID) with
// their AMD VCEKs and ASKs (testdata/README.md), verified by snpVerifierFor with the default
// config (ARK-Milan configured, ARK-Genoa/ARK-Turin embedded) and the mitigation requirements of
// the Turin report switched on; their REPORT_DATA binds nothing we know, so no binding is checked.
// KDS outage (the latency libs/attestation/src/snp/kds-outage.int.spec.ts no longer asserts): a
// verifier whose KDS is a loopback server that never answers, with the VCEK and chain cached from
// an earlier document, verifying documents that carry neither; against the warm verifier above.
import { createHash, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import {
  certificateFromPem,
  checkReportData,
  Measurements,
  NOP_ATTESTATION_LOGGER,
  parseReport,
  parseSignerCertificate,
  SnpCollateral,
  snpVerifierFor,
  type SevSnpConfigBase,
} from '@asterism/attestation';
import { median, quantile, ratio } from './stats.js';

const N = Number(process.env.N ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const testdata = (p: string) => readFileSync(resolve(import.meta.dirname, '../../../testdata', p));
/** A time at which the Azure VCEK chain is valid (as the tests pin it). */
const AT = new Date('2024-06-01T00:00:00Z');

const report = Buffer.from(testdata('snp/attestation.bin').subarray(0, 0x4a0));
const vcekPem = testdata('snp/vcek.pem');
const chainPem = testdata('snp/certchain.pem');
const runtimeDigest = createHash('sha256').update(testdata('snp/runtimedata.bin')).digest();
const ark = certificateFromPem(testdata('amd/milan-ark.pem').toString('utf8'));
if (typeof ark === 'string') throw new Error(`testdata/amd/milan-ark.pem: ${ark}`);
const config: SevSnpConfigBase = {
  measurements: new Measurements(),
  bootloaderVersion: { value: 2, wantLatest: false },
  teeVersion: { value: 0, wantLatest: false },
  snpVersion: { value: 6, wantLatest: false },
  microcodeVersion: { value: 93, wantLatest: false },
  amdRootKey: ark,
  amdSigningKey: null,
};
const evidence = { report, reportSigner: vcekPem, certChain: chainPem };
const binding = (r: Parameters<typeof checkReportData>[0]) => checkReportData(r, runtimeDigest, 'SHA-256 of the HCL runtime data');
const newVerifier = () => snpVerifierFor(config, { collateral: new SnpCollateral({ offline: true }), now: () => AT }, NOP_ATTESTATION_LOGGER, { minimumTcb: true });
const warm = newVerifier();

// Current-generation evidence (pinned inside the VCEKs' validity).
const AT_CURRENT = new Date('2026-03-01T00:00:00Z');
const currentConfig: SevSnpConfigBase = { ...config, amdRootKey: null, bootloaderVersion: { value: 1, wantLatest: false }, snpVersion: { value: 4, wantLatest: false }, microcodeVersion: { value: 81, wantLatest: false } };
const currentVerifier = (extra: Partial<SevSnpConfigBase> = {}) =>
  snpVerifierFor({ ...currentConfig, ...extra }, { collateral: new SnpCollateral({ offline: true }), now: () => AT_CURRENT }, NOP_ATTESTATION_LOGGER, { minimumTcb: true });
const genoa = { report: testdata('snp/genoa-report-v3.bin'), reportSigner: testdata('snp/genoa-vcek.pem'), certChain: testdata('amd/genoa-ask.pem') };
const turin = { report: testdata('snp/turin-report-v5.bin'), reportSigner: testdata('snp/turin-vcek.pem'), certChain: testdata('amd/turin-ask.pem') };
const warmGenoa = currentVerifier();
const warmTurin = currentVerifier({ minimumReportVersion: 5, requiredLaunchMitigations: 0x3fn, requiredCurrentMitigations: 0x3fn });
const noBinding = () => undefined;

// Baseline: ECDSA P-384 over the signed bytes (R and S as the parser already turned them big-endian).
const vcekKey = parseSignerCertificate(vcekPem.toString('utf8'), 'vcek').publicKey;
const parsed = parseReport(report);
const signature = Buffer.concat([parsed.signatureR, parsed.signatureS]);
const signed = parsed.signedBytes;

async function time(fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const baseline = () => {
  if (!verify('sha384', signed, { key: vcekKey, dsaEncoding: 'ieee-p1363' }, signature)) throw new Error('baseline signature must verify');
};
const hangingKds = createServer(() => undefined).listen(0, '127.0.0.1');
await new Promise((r) => hangingKds.once('listening', r));
const outage = snpVerifierFor(
  config,
  { collateral: new SnpCollateral({ kdsBaseUrl: `http://127.0.0.1:${(hangingKds.address() as AddressInfo).port}` }), now: () => AT },
  NOP_ATTESTATION_LOGGER,
  { minimumTcb: true },
);
await outage.verify(evidence, binding); // caches the VCEK and the chain it carries
await new Promise((r) => setTimeout(r, 200));
const duringOutage = () => outage.verify({ report, reportSigner: Buffer.alloc(0), certChain: Buffer.alloc(0) }, binding);

// Two groups, each interleaved so machine load hits its candidates alike; the cold ones run in a
// group of their own, as the garbage a cold verifier leaves would otherwise be collected in
// whichever warm candidate happens to follow it.
const warmGroup: Record<string, () => unknown> = {
  'bare node:crypto P-384 verify': baseline,
  'Milan v2 (Azure) verify, warm': () => warm.verify(evidence, binding),
  'Genoa v3 verify, warm': () => warmGenoa.verify(genoa, noBinding),
  'Turin v5 verify, warm': () => warmTurin.verify(turin, noBinding),
  'Milan v2 (Azure) verify, KDS hangs, VCEK cached': duringOutage,
};
const coldGroup: Record<string, () => unknown> = {
  'Milan v2 (Azure) verify, cold': () => newVerifier().verify(evidence, binding),
  'Turin v5 verify, cold': () => currentVerifier({ minimumReportVersion: 5, requiredLaunchMitigations: 0x3fn }).verify(turin, noBinding),
};
const samples: Record<string, number[]> = {};
for (const group of [warmGroup, coldGroup]) {
  for (let i = 0; i < 20; i++) for (const fn of Object.values(group)) await fn();
  for (const k of Object.keys(group)) samples[k] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < N / ROUNDS; i++) for (const [name, fn] of Object.entries(group)) samples[name]!.push(await time(fn));
  }
}
const m = Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, median(s)]));
for (const [name, s] of Object.entries(samples)) console.log(`${`SNP ${name}:`.padEnd(40)} p10 ${quantile(s, 0.1).toFixed(3)} ms, median ${m[name]!.toFixed(3)} ms, p90 ${quantile(s, 0.9).toFixed(3)} ms (n=${s.length})`);
const p384 = m['bare node:crypto P-384 verify']!;
console.log(`ratio warm Milan / p384: ${ratio(m['Milan v2 (Azure) verify, warm']!, p384).toFixed(2)}x, cold Milan / p384: ${ratio(m['Milan v2 (Azure) verify, cold']!, p384).toFixed(1)}x`);
console.log(`ratio warm Turin v5 / warm Milan v2: ${ratio(m['Turin v5 verify, warm']!, m['Milan v2 (Azure) verify, warm']!).toFixed(2)}x, warm Genoa v3 / warm Milan v2: ${ratio(m['Genoa v3 verify, warm']!, m['Milan v2 (Azure) verify, warm']!).toFixed(2)}x`);
console.log(`ratio KDS outage / warm Milan v2: ${ratio(m['Milan v2 (Azure) verify, KDS hangs, VCEK cached']!, m['Milan v2 (Azure) verify, warm']!).toFixed(2)}x`);
hangingKds.closeAllConnections();
hangingKds.close();
console.log(`load average: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
