/**
 * Test fixtures for SEV-SNP (used by spec files only): the golden vectors from `testdata/`, and a
 * synthetic AMD hierarchy - a test ARK, ASK and ASVK (RSASSA-PSS/SHA-384) issuing VCEKs and VLEKs
 * with the real extensions - plus a report builder and signer, so whole documents (TPM quote and
 * SNP report bound to a swtpm AK) can be verified end to end with a root the test controls.
 */
import 'reflect-metadata';
import { createPrivateKey, sign, webcrypto, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as x509 from '@peculiar/x509';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { SNP_OID } from './certs.js';
import { amdNames, hwidLength, tcbLayoutOf, type AmdProductLine } from './lines.js';
import { REPORT_SIZE, SIGNED_SIZE } from './report.js';
import { encodeTcb, type TcbVersion } from './tcb.js';

x509.cryptoProvider.set(webcrypto as never);

/** The golden vectors of testdata/ (see testdata/README.md). */
export function goldenSnp() {
  const dir = resolve(WORKSPACE_ROOT, 'testdata');
  const read = (p: string) => readFileSync(resolve(dir, p));
  const attestation = read('snp/attestation.bin');
  return {
    azureReport: Buffer.from(attestation.subarray(0, REPORT_SIZE)),
    azureHclHeader: Buffer.from(attestation.subarray(REPORT_SIZE)),
    runtimeData: read('snp/runtimedata.bin'),
    vcekPem: read('snp/vcek.pem').toString('utf8'),
    vcekDer: read('snp/vcek.cert'),
    certChainPem: read('snp/certchain.pem').toString('utf8'),
    vlekReport: Buffer.from(read('snp/report-vlek.hex').toString('utf8').trim(), 'hex'),
    vlekPem: read('snp/vlek.pem').toString('utf8'),
    vlekChainPem: read('snp/vlekcertchain.pem').toString('utf8'),
    arkPem: read('amd/milan-ark.pem').toString('utf8'),
    askPem: read('amd/milan-ask.pem').toString('utf8'),
    genoaReport: read('snp/genoa-report-v3.bin'),
    genoaVcekPem: read('snp/genoa-vcek.pem').toString('utf8'),
    genoaArkPem: read('amd/genoa-ark.pem').toString('utf8'),
    genoaAskPem: read('amd/genoa-ask.pem').toString('utf8'),
    turinReport: read('snp/turin-report-v5.bin'),
    turinVcekPem: read('snp/turin-vcek.pem').toString('utf8'),
    turinArkPem: read('amd/turin-ark.pem').toString('utf8'),
    turinAskPem: read('amd/turin-ask.pem').toString('utf8'),
  };
}

/** A time at which the Azure VCEK chain is valid (VCEK 2023-08-30 to 2030-08-30). */
export const AZURE_VECTOR_TIME = new Date('2024-06-01T00:00:00Z');
/** A time at which the Genoa and Turin VCEKs are valid (2026-02-05 to 2033-02-05). */
export const CURRENT_GEN_VECTOR_TIME = new Date('2026-03-01T00:00:00Z');
/** A time at which the VLEK vector is valid (2023-07-19 to 2024-07-19). */
export const VLEK_VECTOR_TIME = new Date('2024-01-01T00:00:00Z');

const AMD_DN = 'OU=Engineering, C=US, L=Santa Clara, ST=CA, O=Advanced Micro Devices';
const PSS = { name: 'RSA-PSS', hash: 'SHA-384', saltLength: 48 } as const;
const RSA_GEN = { name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-384' } as const;
const EC_GEN = { name: 'ECDSA', namedCurve: 'P-384' } as const;
const YEAR = 365 * 86_400_000;

function derInteger(n: number): Uint8Array {
  return n >= 0x80 ? new Uint8Array([0x02, 0x02, 0x00, n]) : new Uint8Array([0x02, 0x01, n]);
}

function derIa5(s: string): Uint8Array {
  const b = Buffer.from(s, 'latin1');
  return new Uint8Array([0x16, b.length, ...b]);
}

type Keys = webcrypto.CryptoKeyPair;

/** A certificate the synthetic hierarchy issued, with its private key. */
export interface TestCert {
  readonly der: Buffer;
  readonly pem: string;
  readonly keys: Keys;
  /** node:crypto private key (ECDSA keys sign reports). */
  readonly privateKey: KeyObject;
}

async function toTestCert(cert: x509.X509Certificate, keys: Keys): Promise<TestCert> {
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { der: Buffer.from(cert.rawData), pem: `${cert.toString('pem')}\n`, keys, privateKey: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }) };
}

/** Options of an issued V[CL]EK. */
export interface SignerCertOptions {
  readonly tcb: TcbVersion;
  readonly chipId?: Buffer;
  readonly notBefore?: Date;
  readonly notAfter?: Date;
  readonly cspId?: string;
  readonly productName?: string;
  /** Drop an extension (to test its absence). */
  readonly omit?: string;
}

/** A synthetic ARK with its ASK and ASVK (of one product line, default Milan). */
export class TestAmdRoot {
  private constructor(
    readonly ark: TestCert,
    readonly ask: TestCert,
    readonly asvk: TestCert,
    readonly line: AmdProductLine,
  ) {}

  /** Generates the hierarchy (three RSA-2048 keys, about a second). */
  static async create(validFrom = new Date(Date.now() - YEAR), validTo = new Date(Date.now() + 10 * YEAR), line: AmdProductLine = 'Milan'): Promise<TestAmdRoot> {
    const names = amdNames(line);
    const arkKeys = (await webcrypto.subtle.generateKey(RSA_GEN, true, ['sign', 'verify'])) as Keys;
    const ark = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '010000',
      name: `${AMD_DN}, CN=${names.ark}`,
      notBefore: validFrom,
      notAfter: validTo,
      keys: arkKeys as never,
      signingAlgorithm: PSS,
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    });
    const arkCert = await toTestCert(ark, arkKeys);
    const issueIntermediate = async (cn: string, serial: string) => {
      const keys = (await webcrypto.subtle.generateKey(RSA_GEN, true, ['sign', 'verify'])) as Keys;
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: serial,
        subject: `${AMD_DN}, CN=${cn}`,
        issuer: ark.subject,
        notBefore: validFrom,
        notAfter: validTo,
        publicKey: keys.publicKey as never,
        signingKey: arkKeys.privateKey as never,
        signingAlgorithm: PSS,
        extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
      });
      return toTestCert(cert, keys);
    };
    return new TestAmdRoot(arkCert, await issueIntermediate(names.ask, '010001'), await issueIntermediate(names.asvk, '010101'), line);
  }

  /** PEM chain as KDS serves it (ASK/ASVK, then ARK). */
  chainPem(kind: 'vcek' | 'vlek'): string {
    return `${(kind === 'vcek' ? this.ask : this.asvk).pem}${this.ark.pem}`;
  }

  /** Issues a VCEK or VLEK with the AMD extensions of the line (Turin: fmcSPL, 8-byte HWID). */
  async issue(kind: 'vcek' | 'vlek', o: SignerCertOptions): Promise<TestCert> {
    const keys = (await webcrypto.subtle.generateKey(EC_GEN, true, ['sign', 'verify'])) as Keys;
    const issuer = kind === 'vcek' ? this.ask : this.asvk;
    const turin = this.line === 'Turin';
    const ext: Array<[string, Uint8Array]> = [
      [SNP_OID.structVersion, derInteger(1)],
      [SNP_OID.productName, derIa5(o.productName ?? (turin ? 'Turin' : `${this.line}-B0`))],
      ...(turin ? ([[SNP_OID.fmcSpl, derInteger(o.tcb.fmc ?? 0)]] as Array<[string, Uint8Array]>) : []),
      [SNP_OID.blSpl, derInteger(o.tcb.bootloader)],
      [SNP_OID.teeSpl, derInteger(o.tcb.tee)],
      [SNP_OID.snpSpl, derInteger(o.tcb.snp)],
      [SNP_OID.ucodeSpl, derInteger(o.tcb.microcode)],
      kind === 'vcek' ? [SNP_OID.hwid, (o.chipId ?? Buffer.alloc(64, 0xab)).subarray(0, hwidLength(this.line))] : [SNP_OID.cspId, derIa5(o.cspId ?? 'CN=test-csp')],
    ];
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: '02',
      subject: `${AMD_DN}, CN=${kind === 'vcek' ? 'SEV-VCEK' : 'SEV-VLEK'}`,
      issuer: new x509.X509Certificate(issuer.der).subject,
      notBefore: o.notBefore ?? new Date(Date.now() - YEAR),
      notAfter: o.notAfter ?? new Date(Date.now() + 5 * YEAR),
      publicKey: keys.publicKey as never,
      signingKey: issuer.keys.privateKey as never,
      signingAlgorithm: PSS,
      extensions: ext.filter(([oid]) => oid !== o.omit).map(([oid, v]) => new x509.Extension(oid, false, v)),
    });
    return toTestCert(cert, keys);
  }
}

/** Fields of a synthetic report (everything else zero / the values below). */
export interface ReportFields {
  readonly version?: number;
  readonly policy?: bigint;
  readonly vmpl?: number;
  readonly signingKey?: 0 | 1 | 7;
  readonly reportData?: Buffer;
  readonly measurement?: Buffer;
  readonly idKeyDigest?: Buffer;
  readonly chipId?: Buffer;
  readonly tcb?: TcbVersion;
  readonly currentTcb?: TcbVersion;
  readonly launchTcb?: TcbVersion;
  readonly cpuid?: [number, number, number];
  /** Version 5: LAUNCH_MIT_VECTOR / CURRENT_MIT_VECTOR. */
  readonly launchMit?: bigint;
  readonly currentMit?: bigint;
}

/** A structurally valid, unsigned report. */
export function buildReport(f: ReportFields = {}): Buffer {
  const b = Buffer.alloc(REPORT_SIZE);
  const tcb = f.tcb ?? { bootloader: 3, tee: 0, snp: 10, microcode: 115 };
  const layout = f.cpuid && f.cpuid[0] >= 0x1a ? tcbLayoutOf('Turin') : tcbLayoutOf('Milan');
  const encode = (t: TcbVersion) => encodeTcb(t, layout);
  b.writeUInt32LE(f.version ?? 2, 0);
  b.writeBigUInt64LE(f.policy ?? 0x30000n, 8);
  b.writeUInt32LE(f.vmpl ?? 0, 0x30);
  b.writeUInt32LE(1, 0x34);
  encode(f.currentTcb ?? tcb).copy(b, 0x38);
  b.writeUInt32LE((f.signingKey ?? 0) << 2, 0x48);
  (f.reportData ?? Buffer.alloc(64)).copy(b, 0x50);
  (f.measurement ?? Buffer.alloc(48, 0x11)).copy(b, 0x90);
  (f.idKeyDigest ?? Buffer.alloc(48)).copy(b, 0xe0);
  encode(tcb).copy(b, 0x180);
  if (f.cpuid) Buffer.from(f.cpuid).copy(b, 0x188);
  (f.chipId ?? Buffer.alloc(64, 0xab)).copy(b, 0x1a0);
  encode(tcb).copy(b, 0x1e0);
  encode(f.launchTcb ?? tcb).copy(b, 0x1f0);
  if (f.launchMit !== undefined) b.writeBigUInt64LE(f.launchMit, 0x1f8);
  if (f.currentMit !== undefined) b.writeBigUInt64LE(f.currentMit, 0x200);
  return b;
}

/** Signs bytes [0, 0x2A0) with an ECDSA P-384 key and stores R and S little-endian. */
export function signReport(report: Buffer, key: KeyObject): Buffer {
  const out = Buffer.from(report);
  const sig = sign('sha384', out.subarray(0, SIGNED_SIZE), { key, dsaEncoding: 'ieee-p1363' });
  out.fill(0, SIGNED_SIZE);
  Buffer.from(sig.subarray(0, 48)).reverse().copy(out, SIGNED_SIZE);
  Buffer.from(sig.subarray(48, 96)).reverse().copy(out, SIGNED_SIZE + 72);
  return out;
}
