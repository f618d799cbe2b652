/**
 * SEV-SNP targets: the report, the V[CL]EK and ASK/ARK certificates, the certificate table, the
 * HCL report, the instance info, and the whole verifier over documents built from the real
 * vectors (so mutated certificates reach chain and signature verification).
 */
import { AttestationError, CERT_TABLE_GUID, encodeCertTable, encodeHclReport, encodeSnpInstanceInfo, NOP_ATTESTATION_LOGGER, REPORT_SIZE } from '@asterism/attestation';
import {
  decodeSnpInstanceInfo,
  parseAmdCertificate,
  parseAmdChain,
  parseCertTable,
  parseHclReport,
  parseReport,
  parseSignerCertificate,
  pemCertificates,
  SignatureMemo,
  SnpCollateral,
  SnpVerifier,
} from '@asterism/attestation/parsers';
import type { FuzzTarget } from '../gate.js';
import { vector, vectorText } from '../vectors.js';

/** Inside the validity of the VCEK (2023-08-30 to 2030-08-30) and of the expired VLEK (2023-07-19 to 2024-07-19). */
const VECTOR_TIME = new Date('2024-01-01T00:00:00Z');
const ZERO_TCB = { bootloader: 0, tee: 0, snp: 0, microcode: 0 };

/** The real SNP evidence: reports, certificates and chains of testdata/snp and testdata/amd. */
function snpVectors() {
  const attestation = vector('snp/attestation.bin');
  return {
    azureReport: attestation.subarray(0, REPORT_SIZE),
    runtimeData: vector('snp/runtimedata.bin'),
    vlekReport: Buffer.from(vectorText('snp/report-vlek.hex').trim(), 'hex'),
    vcekDer: vector('snp/vcek.cert'),
    vcekPem: vector('snp/vcek.pem'),
    certChain: vector('snp/certchain.pem'),
    vlekPem: vector('snp/vlek.pem'),
    vlekChain: vector('snp/vlekcertchain.pem'),
    arkPem: vector('amd/milan-ark.pem'),
    askPem: vector('amd/milan-ask.pem'),
    genoaReport: vector('snp/genoa-report-v3.bin'),
    turinReport: vector('snp/turin-report-v5.bin'),
    genoaVcekPem: vector('snp/genoa-vcek.pem'),
    turinVcekPem: vector('snp/turin-vcek.pem'),
    genoaChain: Buffer.concat([vector('amd/genoa-ask.pem'), vector('amd/genoa-ark.pem')]),
    turinChain: Buffer.concat([vector('amd/turin-ask.pem'), vector('amd/turin-ark.pem')]),
  };
}

/** The SNP targets. */
export function snpTargets(): FuzzTarget[] {
  const v = snpVectors();
  const ark = parseAmdCertificate(pemCertificates(v.arkPem.toString('utf8'), 'ARK')[0]!, 'ARK');
  const memo = new SignatureMemo();
  const now = () => VECTOR_TIME;
  const verifier = new SnpVerifier({
    ark,
    memo,
    now,
    logger: NOP_ATTESTATION_LOGGER,
    policy: { vmpl: 0, minimumTcb: ZERO_TCB, minimumLaunchTcb: ZERO_TCB, permitProvisionalFirmware: true },
    collateral: new SnpCollateral({ offline: true }).views(ark, memo, now),
  });
  const info = (report: Buffer, signer: Buffer, chain: Buffer, runtimeData: Buffer | null) =>
    encodeSnpInstanceInfo({ reportSigner: signer, certChain: chain, attestationReport: report, azure: runtimeData ? { runtimeData, maaToken: '' } : null, gcp: null });
  const der = (pem: Buffer) => pemCertificates(pem.toString('utf8'), 'certificate')[0]!;
  return [
    {
      name: 'snp.report',
      parser: 'parseReport (libs/attestation/src/snp/report.ts)',
      seeds: [
        { name: 'snp/attestation.bin', bytes: v.azureReport },
        { name: 'snp/report-vlek.hex', bytes: v.vlekReport },
        { name: 'snp/genoa-report-v3.bin', bytes: v.genoaReport },
        { name: 'snp/turin-report-v5.bin', bytes: v.turinReport },
      ],
      runs: 4000,
      run: (b) => parseReport(b),
    },
    {
      name: 'snp.signer',
      parser: 'parseSignerCertificate (libs/attestation/src/snp/certs.ts)',
      seeds: [
        { name: 'snp/vcek.cert', bytes: v.vcekDer },
        { name: 'snp/vcek.pem', bytes: v.vcekPem },
        { name: 'snp/vlek.pem', bytes: v.vlekPem },
        { name: 'snp/genoa-vcek.pem', bytes: v.genoaVcekPem },
        { name: 'snp/turin-vcek.pem', bytes: v.turinVcekPem },
      ],
      runs: 2500,
      // Every product line's rules over every seed: a Turin VCEK read as Milan must fail typed too.
      run: (b) => {
        for (const line of ['Milan', 'Genoa', 'Turin'] as const) {
          try {
            parseSignerCertificate(b, b.includes('SEV-VLEK') ? 'vlek' : 'vcek', line);
          } catch (e) {
            if (line === 'Turin') throw e;
            if (!(e instanceof AttestationError)) throw e;
          }
        }
      },
    },
    {
      name: 'snp.chain',
      parser: 'parseAmdChain (libs/attestation/src/snp/certs.ts)',
      seeds: [
        { name: 'snp/certchain.pem', bytes: v.certChain },
        { name: 'snp/vlekcertchain.pem', bytes: v.vlekChain },
        { name: 'amd/milan-ask.pem + amd/milan-ark.pem', bytes: Buffer.concat([v.askPem, v.arkPem]) },
        { name: 'amd/genoa-ask.pem + amd/genoa-ark.pem', bytes: v.genoaChain },
        { name: 'amd/turin-ask.pem + amd/turin-ark.pem', bytes: v.turinChain },
      ],
      runs: 2000,
      run: (b) => parseAmdChain(b.toString('latin1')),
    },
    {
      name: 'snp.cert-table',
      parser: 'parseCertTable + parseSignerCertificate/parseAmdCertificate of its entries (libs/attestation/src/snp)',
      seeds: [
        {
          name: 'snp/vcek.cert + certchain.pem in a certificate table',
          bytes: encodeCertTable([
            [CERT_TABLE_GUID.vcek, v.vcekDer],
            [CERT_TABLE_GUID.ask, der(v.askPem)],
            [CERT_TABLE_GUID.ark, der(v.arkPem)],
          ]),
        },
      ],
      runs: 600,
      run: (b) => {
        for (const [guid, cert] of parseCertTable(b)) {
          if (guid === CERT_TABLE_GUID.vcek) parseSignerCertificate(cert, 'vcek');
          else parseAmdCertificate(cert, guid);
        }
      },
    },
    {
      name: 'snp.hcl-report',
      parser: 'parseHclReport (libs/attestation/src/snp/hcl.ts)',
      seeds: [{ name: 'snp/attestation.bin + snp/runtimedata.bin as an HCL report', bytes: encodeHclReport(v.azureReport, v.runtimeData) }],
      runs: 1500,
      run: (b) => parseHclReport(b),
    },
    {
      name: 'snp.verifier',
      parser: 'decodeSnpInstanceInfo + SnpVerifier.verify (libs/attestation/src/snp)',
      seeds: [
        { name: 'azure-sev-snp instance info (attestation.bin, vcek.pem, certchain.pem, runtimedata.bin)', bytes: info(v.azureReport, v.vcekPem, v.certChain, v.runtimeData) },
        { name: 'instance info (attestation.bin, vcek.cert)', bytes: info(v.azureReport, v.vcekDer, v.certChain, null) },
        { name: 'instance info (report-vlek.hex, vlek.pem, vlekcertchain.pem)', bytes: info(v.vlekReport, v.vlekPem, v.vlekChain, null) },
      ],
      runs: 3000,
      shape: { json: true },
      run: async (b) => {
        const i = decodeSnpInstanceInfo(b);
        await verifier.verify({ report: i.attestationReport, reportSigner: i.reportSigner, certChain: i.certChain }, () => undefined);
      },
    },
  ];
}
