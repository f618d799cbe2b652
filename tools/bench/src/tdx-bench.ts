// TDX DCAP quote verification with warm collateral (in memory, nothing fetched) vs one bare
// node:crypto ECDSA P-256 verify of the same quote body, measured in the same run.
//
//   npx tsx tools/bench/src/tdx-bench.ts            (env: N=300 ROUNDS=5)
//
// The candidate is DcapVerifier.authenticate on the real production quote and its June 2023
// collateral (testdata/tdx): quote parse, PCK chain (3 certificates), 2 CRLs, TCB info and QE
// identity (parse, issuer chains, signatures), QE report signature and binding, quote signature.
// The warm verifier has checked the collateral and chain signatures before (memoised by content,
// validity windows re-checked); the cold one is new for every sample.
// The baseline is the single signature check every quote verifier needs at minimum.
import { createPublicKey, verify } from 'node:crypto';
import { DcapVerifier, parseTdxQuote } from '@asterism/attestation';
import { tdxVector, VECTOR_TIME, vectorCollateral } from '@asterism/attestation/testing';
import { median, quantile, ratio } from './stats.js';

const N = Number(process.env.N ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const at = VECTOR_TIME;
const quote = tdxVector('quote-v4-spr.dat');
const collateral = vectorCollateral();
const verifier = new DcapVerifier();
const parsed = parseTdxQuote(quote);
const ak = parsed.attestationKey;
const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: ak.subarray(0, 32).toString('base64url'), y: ak.subarray(32).toString('base64url') }, format: 'jwk' });

function time(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

const candidate = () => verifier.authenticate(quote, collateral, at);
// Cold: a fresh verifier, so every chain, CRL and collateral signature is checked again.
const cold = () => new DcapVerifier().authenticate(quote, collateral, at);
const baseline = () => {
  if (!verify('sha256', parsed.signedBytes, { key, dsaEncoding: 'ieee-p1363' }, parsed.signature)) throw new Error('baseline signature must verify');
};
for (let i = 0; i < 20; i++) {
  candidate();
  cold();
  baseline();
}

const samples = { dcap: [] as number[], cold: [] as number[], p256: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < N / ROUNDS; i++) {
    samples.dcap.push(time(candidate));
    samples.cold.push(time(cold));
    samples.p256.push(time(baseline));
  }
}
const m = { dcap: median(samples.dcap), cold: median(samples.cold), p256: median(samples.p256) };
console.log(`TDX DCAP authenticate (warm collateral): median ${m.dcap.toFixed(3)} ms, p90 ${quantile(samples.dcap, 0.9).toFixed(3)} ms (n=${samples.dcap.length})`);
console.log(`TDX DCAP authenticate (cold verifier):   median ${m.cold.toFixed(3)} ms, p90 ${quantile(samples.cold, 0.9).toFixed(3)} ms (n=${samples.cold.length})`);
console.log(`bare node:crypto P-256 verify:          median ${m.p256.toFixed(3)} ms, p90 ${quantile(samples.p256, 0.9).toFixed(3)} ms (n=${samples.p256.length})`);
console.log(`ratio warm dcap / p256: ${ratio(m.dcap, m.p256).toFixed(1)}x, cold dcap / p256: ${ratio(m.cold, m.p256).toFixed(1)}x`);
