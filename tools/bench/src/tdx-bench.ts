// TDX DCAP quote verification with warm collateral (in memory, nothing fetched) vs one bare
// node:crypto ECDSA P-256 verify of the same quote body, measured in the same run.
//
//   npx tsx tools/bench/src/tdx-bench.ts            (nx run bench:bench-tdx; env: N=300 ROUNDS=5)
//
// Two candidates:
// - `verify`: the whole of what a TDX validator runs per join, DcapVerifier.verify = authenticate
//   + TCB evaluation (platform level, TDX module, QE identity, convergence) + the status policy.
//   The real quote's platform is below every TCB level of its June 2023 collateral
//   (TCB_LEVEL_NOT_FOUND, see testdata/README.md), so this runs on the real quote re-signed under a
//   stand-in Intel PKI made with openssl, with re-signed collateral that lists its level (the
//   synthetic-pki fixture of libs/attestation): same sizes, same stages, status UpToDate.
// - `authenticate`: the cryptographic half on the real production quote and its real collateral
//   (testdata/tdx): quote parse, PCK chain (3 certificates), 2 CRLs, TCB info and QE identity
//   (parse, issuer chains, signatures), QE report signature and binding, quote signature.
// - the same two on TDX module 1.5 evidence (issue 28): `verify` on the real TD 1.5 quote v5
//   re-signed under its own stand-in PKI (status UpToDate, module identity TDX_01, relaunch rule
//   evaluated), `authenticate` on the real TD 1.5 quote with its February 2026 collateral.
// Warm verifiers have checked collateral and chain signatures before (memoised by content,
// validity windows re-checked); cold ones are new for every sample.
// The baseline is the single signature check every quote verifier needs at minimum.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DcapVerifier, parseTdxQuote, type DcapCollateral } from '@asterism/attestation';
import {
  makeSyntheticPki,
  resignedCollateral,
  resignedQuote,
  td15Collateral,
  TD15_VECTOR_TIME,
  tdxVector,
  V5_TD15,
  VECTOR_TIME,
  vectorCollateral,
} from '@asterism/attestation/testing';
import { median, quantile, ratio } from './stats.js';

const N = Number(process.env.N ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

/** The attestation key of a quote, and one bare verify of its signed bytes. */
function bareVerify(quote: Buffer): () => void {
  const parsed = parseTdxQuote(quote);
  const ak = parsed.attestationKey;
  const key: KeyObject = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: ak.subarray(0, 32).toString('base64url'), y: ak.subarray(32).toString('base64url') }, format: 'jwk' });
  return () => {
    if (!verify('sha256', parsed.signedBytes, { key, dsaEncoding: 'ieee-p1363' }, parsed.signature)) throw new Error('baseline signature must verify');
  };
}

// Full verification on the re-signed quote (stand-in root).
const pki = makeSyntheticPki();
const pki15 = makeSyntheticPki(V5_TD15);
// After both PKIs exist: their certificates are valid from the second they were made.
const at = new Date();
const synthetic = { quote: resignedQuote(pki), collateral: resignedCollateral(pki, at) as DcapCollateral };
const warmVerify = new DcapVerifier({ trustedRoot: pki.root.pem });
if (warmVerify.verify(synthetic.quote, synthetic.collateral, at).tcb.status !== 'UpToDate') throw new Error('the re-signed quote must verify as UpToDate');
// Authentication on the real quote and collateral.
const real = { quote: tdxVector('quote-v4-spr.dat'), collateral: vectorCollateral() };
const warmAuth = new DcapVerifier();
// The same on TD 1.5 evidence.
const synthetic15 = { quote: resignedQuote(pki15, undefined, V5_TD15), collateral: resignedCollateral(pki15, at, {}, V5_TD15) as DcapCollateral };
const warmVerify15 = new DcapVerifier({ trustedRoot: pki15.root.pem });
if (warmVerify15.verify(synthetic15.quote, synthetic15.collateral, at).tcb.status !== 'UpToDate') throw new Error('the re-signed TD 1.5 quote must verify as UpToDate');
const real15 = { quote: tdxVector(V5_TD15.quote), collateral: td15Collateral() };
const warmAuth15 = new DcapVerifier();

// Warm and cold candidates run in separate groups, each interleaved so machine load hits its
// candidates alike: the garbage a cold verifier leaves would otherwise be collected inside
// whichever warm sample follows it.
const warmGroup: Record<string, () => unknown> = {
  'P-256 verify (synthetic quote)': bareVerify(synthetic.quote),
  'verify, warm (synthetic PKI)': () => warmVerify.verify(synthetic.quote, synthetic.collateral, at),
  'TD1.5 verify, warm (synthetic PKI)': () => warmVerify15.verify(synthetic15.quote, synthetic15.collateral, at),
  'P-256 verify (real quote)': bareVerify(real.quote),
  'authenticate, warm (real quote)': () => warmAuth.authenticate(real.quote, real.collateral, VECTOR_TIME),
  'TD1.5 P-256 verify (real quote)': bareVerify(real15.quote),
  'TD1.5 authenticate, warm (real quote)': () => warmAuth15.authenticate(real15.quote, real15.collateral, TD15_VECTOR_TIME),
};
const coldGroup: Record<string, () => unknown> = {
  'verify, cold (synthetic PKI)': () => new DcapVerifier({ trustedRoot: pki.root.pem }).verify(synthetic.quote, synthetic.collateral, at),
  'TD1.5 verify, cold (synthetic PKI)': () => new DcapVerifier({ trustedRoot: pki15.root.pem }).verify(synthetic15.quote, synthetic15.collateral, at),
  'authenticate, cold (real quote)': () => new DcapVerifier().authenticate(real.quote, real.collateral, VECTOR_TIME),
  'TD1.5 authenticate, cold (real quote)': () => new DcapVerifier().authenticate(real15.quote, real15.collateral, TD15_VECTOR_TIME),
};

function time(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

const samples: Record<string, number[]> = {};
for (const group of [warmGroup, coldGroup]) {
  for (let i = 0; i < 20; i++) for (const fn of Object.values(group)) fn();
  for (const k of Object.keys(group)) samples[k] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < N / ROUNDS; i++) for (const [name, fn] of Object.entries(group)) samples[name]!.push(time(fn));
  }
}
const m = Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, median(s)]));
for (const [name, s] of Object.entries(samples)) {
  console.log(`${`TDX ${name}:`.padEnd(44)} p10 ${quantile(s, 0.1).toFixed(3)} ms, median ${m[name]!.toFixed(3)} ms, p90 ${quantile(s, 0.9).toFixed(3)} ms (n=${s.length})`);
}
const p256 = m['P-256 verify (synthetic quote)']!;
const p256Real = m['P-256 verify (real quote)']!;
console.log(`ratio verify warm / p256: ${ratio(m['verify, warm (synthetic PKI)']!, p256).toFixed(1)}x, verify cold / p256: ${ratio(m['verify, cold (synthetic PKI)']!, p256).toFixed(1)}x`);
console.log(`ratio authenticate warm / p256: ${ratio(m['authenticate, warm (real quote)']!, p256Real).toFixed(1)}x, authenticate cold / p256: ${ratio(m['authenticate, cold (real quote)']!, p256Real).toFixed(1)}x`);
console.log(`ratio TD1.5 verify warm / TD1.0 verify warm: ${ratio(m['TD1.5 verify, warm (synthetic PKI)']!, m['verify, warm (synthetic PKI)']!).toFixed(2)}x, TD1.5 authenticate warm / TD1.0: ${ratio(m['TD1.5 authenticate, warm (real quote)']!, m['authenticate, warm (real quote)']!).toFixed(2)}x`);
console.log(`load average: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
