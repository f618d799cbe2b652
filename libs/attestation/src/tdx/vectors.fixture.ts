/**
 * Loads the real Intel TDX golden vectors of `testdata/tdx` (see testdata/README.md) for tests and
 * benchmarks: a production quote v4 with the June 2023 PCS collateral for its platform, and a
 * production quote v5 with a TD 1.5 body (TDX module 1.5) with the February 2026 PCS collateral
 * for its platform.
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

/** A time inside the validity of every TD 1.5 vector (PCK chain, CRLs, TCB info, QE identity). */
export const TD15_VECTOR_TIME = new Date('2026-03-01T00:00:00Z');

/** The collateral matching `quote-v5-td15-emr.dat` (files `td15-*`). */
export function td15Collateral(): DcapCollateral {
  const text = (name: string) => tdxVector(`td15-${name}`).toString('utf8');
  return {
    tcbInfo: text('tcbinfo.json'),
    tcbInfoIssuerChain: text('tcbinfo-issuer-chain.pem'),
    qeIdentity: text('qe-identity.json'),
    qeIdentityIssuerChain: text('qe-identity-issuer-chain.pem'),
    pckCrl: tdxVector('td15-pck-crl.der'),
    pckCrlIssuerChain: text('pck-crl-issuer-chain.pem'),
    rootCrl: tdxVector('td15-root-crl.der'),
  };
}

/** A real quote with its collateral and a time inside every window. */
export interface TdxVectorSet {
  readonly quote: string;
  readonly collateral: () => DcapCollateral;
  readonly time: Date;
}

/** The v4 Sapphire Rapids vector set. */
export const V4_SPR: TdxVectorSet = { quote: 'quote-v4-spr.dat', collateral: () => vectorCollateral(), time: VECTOR_TIME };
/** The v5 TD 1.5 vector set (TDX module 1.5, FMSPC 90c06f000000). */
export const V5_TD15: TdxVectorSet = { quote: 'quote-v5-td15-emr.dat', collateral: () => td15Collateral(), time: TD15_VECTOR_TIME };

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

/** Byte offsets inside `quote-v5-td15-emr.dat`: the v5 body descriptor and the TD 1.5 fields. */
export const TD15_OFFSETS = {
  bodyType: 48,
  bodySize: 50,
  teeTcbSvn: 54,
  reportData: 54 + 520,
  teeTcbSvn2: 54 + 584,
  mrServiceTd: 54 + 600,
  signature: 54 + 648 + 4,
} as const;
