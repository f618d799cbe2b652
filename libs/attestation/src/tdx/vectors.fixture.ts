/**
 * Loads the real Intel TDX golden vectors of `testdata/tdx` (see testdata/README.md) for tests and
 * benchmarks: a production quote v4 and the June 2023 PCS collateral for its platform.
 */
import { readFileSync } from 'node:fs';
import { AttestationError } from '../errors.js';
import type { DcapCollateral } from './collateral.js';

/** A time inside the validity of every vector (certificates, CRLs, TCB info, QE identity). */
export const VECTOR_TIME = new Date('2023-06-20T00:00:00Z');

/** Bytes of one file of testdata/tdx. */
export function tdxVector(name: string): Buffer {
  return readFileSync(new URL(`../../../../testdata/tdx/${name}`, import.meta.url));
}

/** The collateral matching `quote-v4-spr.dat`. */
export function vectorCollateral(): DcapCollateral {
  const text = (name: string) => tdxVector(name).toString('utf8');
  return {
    tcbInfo: text('tcbinfo.json'),
    tcbInfoIssuerChain: text('tcbinfo-issuer-chain.pem'),
    qeIdentity: text('qe-identity.json'),
    qeIdentityIssuerChain: text('qe-identity-issuer-chain.pem'),
    pckCrl: tdxVector('pck-crl.der'),
    pckCrlIssuerChain: text('pck-crl-issuer-chain.pem'),
    rootCrl: tdxVector('root-crl.der'),
  };
}

/** Byte offsets inside `quote-v4-spr.dat` used by tamper tests (layout: docs/protocol/tdx-dcap.md). */
export const VECTOR_OFFSETS = {
  reportData: 48 + 520,
  signature: 48 + 584 + 4,
  attestationKey: 48 + 584 + 4 + 64,
  qeReport: 48 + 584 + 4 + 128 + 6,
  qeAuthData: 48 + 584 + 4 + 128 + 6 + 384 + 64 + 2,
  pckChain: 48 + 584 + 4 + 128 + 6 + 384 + 64 + 2 + 32 + 6,
} as const;

/** 'OK' when `fn` returns, else the code of the AttestationError it throws (anything else is rethrown). */
export function errorCode(fn: () => unknown): string {
  try {
    fn();
    return 'OK';
  } catch (err) {
    if (err instanceof AttestationError) return err.code;
    throw err;
  }
}
