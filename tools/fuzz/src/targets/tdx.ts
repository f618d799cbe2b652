/**
 * Intel TDX targets over the real quote and its PCS collateral: the quote parser, DCAP
 * verification of mutated quotes (the PCK chain inside them is mutated as DER) and of mutated
 * collateral (TCB info, QE identity, CRLs, issuer chains), the qemu-tdx document, the Azure HCL
 * report, and the azure-tdx trust decision over a vTPM document carrying the quote.
 */
import { defaultAttestationConfig, encodeDocument, encodeTdxDocument, type AzureTdxConfig, type DcapCollateral } from '@asterism/attestation';
import { azureTdxTrustedKey, DcapVerifier, decodeDocument, decodeTdxDocument, parseTdxHclReport, parseTdxQuote } from '@asterism/attestation/parsers';
import type { FuzzTarget } from '../gate.js';
import { vector, vectorText } from '../vectors.js';

/** Inside the validity of every TDX 1.0 vector (testdata/README.md). */
const VECTOR_TIME = new Date('2023-06-20T00:00:00Z');
/** Inside the validity of the TDX 1.5 quote v5 and its collateral (`td15-*`, testdata/README.md). */
const TD15_TIME = new Date('2026-03-01T00:00:00Z');

/** The PCS collateral of testdata/tdx: `prefix` '' for the TD 1.0 quote, 'td15-' for the TD 1.5 one. */
function collateral(prefix = ''): DcapCollateral {
  return {
    tcbInfo: vectorText(`tdx/${prefix}tcbinfo.json`),
    tcbInfoIssuerChain: vectorText(`tdx/${prefix}tcbinfo-issuer-chain.pem`),
    qeIdentity: vectorText(`tdx/${prefix}qe-identity.json`),
    qeIdentityIssuerChain: vectorText(`tdx/${prefix}qe-identity-issuer-chain.pem`),
    pckCrl: vector(`tdx/${prefix}pck-crl.der`),
    pckCrlIssuerChain: vectorText(`tdx/${prefix}pck-crl-issuer-chain.pem`),
    rootCrl: vector(`tdx/${prefix}root-crl.der`),
  };
}

/** The collateral as one JSON document (CRLs in base64), so the JSON mutator reaches every member. */
function collateralJson(c: DcapCollateral): Buffer {
  return Buffer.from(JSON.stringify({ ...c, pckCrl: Buffer.from(c.pckCrl).toString('base64'), rootCrl: Buffer.from(c.rootCrl).toString('base64') }));
}

function collateralFromJson(b: Buffer, fallback: DcapCollateral = collateral()): DcapCollateral {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(b.toString('utf8')) as Record<string, unknown>;
  } catch {
    return fallback; // the JSON wrapper is the gate's, not a parser's: only the members are fuzzed
  }
  const text = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');
  return {
    tcbInfo: text('tcbInfo'),
    tcbInfoIssuerChain: text('tcbInfoIssuerChain'),
    qeIdentity: text('qeIdentity'),
    qeIdentityIssuerChain: text('qeIdentityIssuerChain'),
    pckCrl: Buffer.from(text('pckCrl'), 'base64'),
    pckCrlIssuerChain: text('pckCrlIssuerChain'),
    rootCrl: Buffer.from(text('rootCrl'), 'base64'),
  };
}

/** The TDX targets. */
export function tdxTargets(): FuzzTarget[] {
  const quote = vector('tdx/quote-v4-spr.dat');
  const quote15 = vector('tdx/quote-v5-td15-emr.dat');
  const real15 = collateral('td15-');
  const root = vector('tdx/intel-sgx-root-ca.pem');
  const hcl = vector('tdx/hclreport.bin');
  const real = collateral();
  const verifier = new DcapVerifier({ trustedRoot: root.toString('utf8') });
  const azureConfig = defaultAttestationConfig('azure-tdx') as AzureTdxConfig;
  const runtimeData = hcl.subarray(1236, 2436);
  const azureDoc = encodeDocument({
    attestation: { akPub: Buffer.alloc(0), quotes: [], eventLog: Buffer.alloc(0), instanceInfo: null, canonicalEventLog: Buffer.alloc(0), akCert: Buffer.alloc(0), intermediateCerts: [], teeAttestation: null },
    instanceInfo: Buffer.from(JSON.stringify({ AttestationReport: quote.toString('base64'), RuntimeData: runtimeData.toString('base64') })),
    userData: Buffer.alloc(0),
  });
  return [
    {
      name: 'tdx.quote',
      parser: 'parseTdxQuote (libs/attestation/src/tdx/quote.ts)',
      seeds: [
        { name: 'tdx/quote-v4-spr.dat', bytes: quote },
        { name: 'tdx/quote-v5-td15-emr.dat', bytes: quote15 },
      ],
      runs: 4000,
      run: (b) => parseTdxQuote(b),
    },
    {
      name: 'tdx.dcap-quote-td15',
      parser: 'DcapVerifier.verify on a mutated TD 1.5 quote v5 with its collateral (libs/attestation/src/tdx/verifier.ts)',
      seeds: [{ name: 'tdx/quote-v5-td15-emr.dat', bytes: quote15 }],
      runs: 1000,
      run: (b) => verifier.verify(b, real15, TD15_TIME),
    },
    {
      name: 'tdx.dcap-collateral-td15',
      parser: 'DcapVerifier.verify of the TD 1.5 quote v5 with mutated collateral (td15 TCB info, QE identity, CRLs, issuer chains)',
      seeds: [{ name: 'tdx/td15-*.json, tdx/td15-*.pem, tdx/td15-*.der', bytes: collateralJson(real15) }],
      runs: 600,
      shape: { json: true },
      run: (b) => verifier.verify(quote15, collateralFromJson(b, real15), TD15_TIME),
    },
    {
      name: 'tdx.dcap-quote',
      parser: 'DcapVerifier.verify on a mutated quote (libs/attestation/src/tdx/verifier.ts)',
      seeds: [{ name: 'tdx/quote-v4-spr.dat', bytes: quote }],
      runs: 2000,
      run: (b) => verifier.verify(b, real, VECTOR_TIME),
    },
    {
      name: 'tdx.dcap-collateral',
      parser: 'DcapVerifier.verify with mutated collateral (TCB info, QE identity, CRLs, issuer chains)',
      seeds: [{ name: 'tdx/*.json, tdx/*.pem, tdx/*.der', bytes: collateralJson(real) }],
      runs: 1200,
      shape: { json: true },
      run: (b) => verifier.verify(quote, collateralFromJson(b), VECTOR_TIME),
    },
    {
      name: 'tdx.document',
      parser: 'decodeTdxDocument + parseTdxQuote (libs/attestation/src/tdx)',
      seeds: [{ name: 'qemu-tdx document of tdx/quote-v4-spr.dat', bytes: encodeTdxDocument({ rawQuote: quote, userData: Buffer.from('user data') }) }],
      runs: 1000,
      shape: { json: true },
      run: (b) => parseTdxQuote(decodeTdxDocument(b).rawQuote),
    },
    {
      name: 'azure.hcl-report',
      parser: 'parseTdxHclReport (libs/attestation/src/azure/hcl-report.ts)',
      seeds: [{ name: 'tdx/hclreport.bin', bytes: hcl }],
      runs: 2000,
      run: (b) => parseTdxHclReport(b),
    },
    {
      name: 'azure.tdx-document',
      parser: 'decodeDocument + azureTdxTrustedKey (libs/attestation/src/azure/tdx.ts)',
      seeds: [{ name: 'vTPM document with tdx/quote-v4-spr.dat and the runtime data of tdx/hclreport.bin', bytes: azureDoc }],
      runs: 1500,
      shape: { json: true },
      run: (b) =>
        azureTdxTrustedKey(decodeDocument(b), {
          config: azureConfig,
          collateral: { collateral: async () => real },
          verifier,
          clock: () => VECTOR_TIME,
        }),
    },
  ];
}
