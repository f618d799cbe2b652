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

const candidate = () => warm.verify(evidence, binding);
const cold = () => newVerifier().verify(evidence, binding);
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
for (let i = 0; i < 20; i++) {
  await candidate();
  await duringOutage();
  await cold();
  baseline();
}

const samples = { snp: [] as number[], outage: [] as number[], cold: [] as number[], p384: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < N / ROUNDS; i++) {
    samples.snp.push(await time(candidate));
    samples.outage.push(await time(duringOutage));
    samples.cold.push(await time(cold));
    samples.p384.push(await time(baseline));
  }
}
const m = { snp: median(samples.snp), outage: median(samples.outage), cold: median(samples.cold), p384: median(samples.p384) };
console.log(`SNP report verify (warm collateral): median ${m.snp.toFixed(3)} ms, p90 ${quantile(samples.snp, 0.9).toFixed(3)} ms (n=${samples.snp.length})`);
console.log(`SNP report verify (KDS hangs, VCEK and chain cached): median ${m.outage.toFixed(3)} ms, p90 ${quantile(samples.outage, 0.9).toFixed(3)} ms (n=${samples.outage.length}), ${ratio(m.outage, m.snp).toFixed(2)}x warm`);
console.log(`SNP report verify (cold verifier):   median ${m.cold.toFixed(3)} ms, p90 ${quantile(samples.cold, 0.9).toFixed(3)} ms (n=${samples.cold.length})`);
console.log(`bare node:crypto P-384 verify:       median ${m.p384.toFixed(3)} ms, p90 ${quantile(samples.p384, 0.9).toFixed(3)} ms (n=${samples.p384.length})`);
console.log(`ratio warm snp / p384: ${ratio(m.snp, m.p384).toFixed(2)}x, cold snp / p384: ${ratio(m.cold, m.p384).toFixed(1)}x`);
hangingKds.closeAllConnections();
hangingKds.close();
