/**
 * A stand-in Intel PKI for tests that need what the real vectors cannot give (a CRL that lists
 * the PCK, a TCB level the platform meets, re-signed collateral): openssl makes a root, a PCK
 * Platform CA, a PCK certificate carrying the real quote's SGX extension and a TCB signing
 * certificate; the quote is the real one re-signed with a fresh attestation key and the PCK key.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import type { DcapCollateral } from './collateral.js';
import { findExtension, parsePemChain, readPckTcb, SGX_EXTENSION_OID } from './pck.js';
import { parseTdxQuote } from './quote.js';
import { tdxVector, V4_SPR, type TdxVectorSet } from './vectors.fixture.js';

/** One certificate with its private key. */
interface Issued {
  pem: string;
  key: KeyObject;
  cert: X509Certificate;
}

/** The stand-in PKI. */
export interface SyntheticPki {
  root: Issued;
  platformCa: Issued;
  pck: Issued;
  tcbSigner: Issued;
}

/** The PCK certificate of a vector set's real quote. */
function realPckOf(source: TdxVectorSet): X509Certificate {
  return parsePemChain(parseTdxQuote(tdxVector(source.quote)).pckChainPem, 'PCK chain')[0]!;
}

/** Makes the PKI with openssl (throws when openssl is missing); the PCK carries the SGX extension of `source`'s PCK. */
export function makeSyntheticPki(source: TdxVectorSet = V4_SPR): SyntheticPki {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-tdx-pki-'));
  try {
    const realPck = realPckOf(source);
    const sgx = findExtension(realPck.raw, SGX_EXTENSION_OID)!;
    writeFileSync(
      join(dir, 'ext.cnf'),
      `[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n[leaf]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n[pck]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n${SGX_EXTENSION_OID}=DER:${sgx.toString('hex')}\n`,
    );
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const newKey = (name: string) => openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', `${name}.key`);
    const read = (name: string): Issued => {
      const pem = readFileSync(join(dir, `${name}.pem`), 'utf8');
      return { pem, key: createPrivateKey(readFileSync(join(dir, `${name}.key`))), cert: new X509Certificate(pem) };
    };
    newKey('root');
    openssl('req', '-x509', '-new', '-key', 'root.key', '-subj', '/CN=Test SGX Root CA', '-days', '30', '-set_serial', '1', '-extensions', 'ca', '-config', 'ext.cnf', '-out', 'root.pem');
    const issue = (name: string, cn: string, issuer: string, section: string, serial: string) => {
      newKey(name);
      openssl('req', '-new', '-key', `${name}.key`, '-subj', `/CN=${cn}`, '-config', 'ext.cnf', '-out', `${name}.csr`);
      openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-set_serial', serial, '-days', '30', '-extfile', 'ext.cnf', '-extensions', section, '-out', `${name}.pem`);
    };
    issue('pca', 'Test SGX PCK Platform CA', 'root', 'ca', '2');
    issue('pck', 'Test SGX PCK Certificate', 'pca', 'pck', '0x7a11ce');
    issue('tcb', 'Test SGX TCB Signing', 'root', 'leaf', '3');
    return { root: read('root'), platformCa: read('pca'), pck: read('pck'), tcbSigner: read('tcb') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The real quote, re-signed: fresh attestation key, QE report signed by the stand-in PCK key.
 * `signedBytes` replaces the header + body the attestation key signs (e.g. a v5 layout).
 */
export function resignedQuote(pki: SyntheticPki, signedBytes?: Buffer, source: TdxVectorSet = V4_SPR): Buffer {
  const real = parseTdxQuote(tdxVector(source.quote));
  const signed = signedBytes ?? real.signedBytes;
  const ak = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = ak.publicKey.export({ format: 'jwk' });
  const akRaw = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  const qeReport = Buffer.from(real.qeReport.raw);
  Buffer.concat([createHash('sha256').update(akRaw).update(real.qeAuthData).digest(), Buffer.alloc(32)]).copy(qeReport, 320);
  const p1363 = (key: KeyObject, data: Buffer) => sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
  const pem = Buffer.from(pki.pck.pem + pki.platformCa.pem + pki.root.pem, 'latin1');
  const u16 = (n: number) => Buffer.from([n & 0xff, n >> 8]);
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  const inner = Buffer.concat([u16(5), u32(pem.length), pem]);
  const outer = Buffer.concat([qeReport, p1363(pki.pck.key, qeReport), u16(real.qeAuthData.length), real.qeAuthData, inner]);
  const sigData = Buffer.concat([p1363(ak.privateKey, signed), akRaw, u16(6), u32(outer.length), outer]);
  return Buffer.concat([signed, u32(sigData.length), sigData]);
}

/** The real quote's header + body as a v5 quote with a body descriptor (type 2: TDX 1.0, 584 bytes; type 3: TDX 1.5, 648). */
export function v5SignedBytes(bodyType: 2 | 3): Buffer {
  const real = parseTdxQuote(tdxVector('quote-v4-spr.dat')).signedBytes;
  const descriptor = Buffer.alloc(6);
  descriptor.writeUInt16LE(bodyType, 0);
  descriptor.writeUInt32LE(bodyType === 2 ? 584 : 648, 2);
  const out = Buffer.concat([real.subarray(0, 48), descriptor, real.subarray(48), Buffer.alloc(bodyType === 3 ? 64 : 0)]);
  out.writeUInt16LE(5, 0);
  return out;
}

/** What to change in the re-signed collateral. */
export interface CollateralEdits {
  /** Edits the parsed `tcbInfo` member before it is signed. */
  tcbInfo?: (t: Record<string, unknown>) => void;
  qeIdentity?: (q: Record<string, unknown>) => void;
  /** Serial numbers (hex) the PCK CRL / root CRL list. */
  pckCrlSerials?: string[];
  rootCrlSerials?: string[];
}

/**
 * The real collateral re-signed by the stand-in PKI, current at `at` (issued a day before, next
 * update a day after), with the first TCB level lowered to what the real platform reports
 * (UpToDate): each SGX component, the PCE SVN and each TDX component the level matches (bytes
 * 2-15 when a module major version is set) at most the platform's.
 */
export function resignedCollateral(pki: SyntheticPki, at: Date, edits: CollateralEdits = {}, source: TdxVectorSet = V4_SPR): DcapCollateral {
  const real = source.collateral();
  const window = { issueDate: new Date(at.getTime() - 86_400_000).toISOString(), nextUpdate: new Date(at.getTime() + 86_400_000).toISOString() };
  const tcb: Record<string, unknown> = { ...(JSON.parse(real.tcbInfo) as { tcbInfo: Record<string, unknown> }).tcbInfo, ...window };
  const levels = tcb.tcbLevels as { tcb: { sgxtcbcomponents: { svn: number }[]; pcesvn: number; tdxtcbcomponents: { svn: number }[] } }[];
  const platform = readPckTcb(realPckOf(source));
  const svn = parseTdxQuote(tdxVector(source.quote)).body.teeTcbSvn;
  const top = levels[0]!.tcb;
  top.sgxtcbcomponents.forEach((c, i) => (c.svn = Math.min(c.svn, platform.sgxComponents[i]!)));
  top.pcesvn = Math.min(top.pcesvn, platform.pceSvn);
  top.tdxtcbcomponents.forEach((c, i) => (c.svn = i < (svn[1]! > 0 ? 2 : 0) ? c.svn : Math.min(c.svn, svn[i]!)));
  edits.tcbInfo?.(tcb);
  const qe: Record<string, unknown> = { ...(JSON.parse(real.qeIdentity) as { enclaveIdentity: Record<string, unknown> }).enclaveIdentity, ...window };
  edits.qeIdentity?.(qe);
  const signed = (key: string, member: Record<string, unknown>) => {
    const text = JSON.stringify(member);
    return `{"${key}":${text},"signature":"${sign('sha256', Buffer.from(text), { key: pki.tcbSigner.key, dsaEncoding: 'ieee-p1363' }).toString('hex')}"}`;
  };
  const chain = pki.tcbSigner.pem + pki.root.pem;
  return {
    tcbInfo: signed('tcbInfo', tcb),
    tcbInfoIssuerChain: chain,
    qeIdentity: signed('enclaveIdentity', qe),
    qeIdentityIssuerChain: chain,
    pckCrl: buildCrl(pki.platformCa.key, edits.pckCrlSerials ?? ['01'], at),
    pckCrlIssuerChain: pki.platformCa.pem + pki.root.pem,
    rootCrl: buildCrl(pki.root.key, edits.rootCrlSerials ?? [], at),
  };
}

/** A DER CRL (v2, ecdsa-with-SHA256) listing `serialsHex`, current at `at` (±1 day) unless `window` says otherwise, signed with `key`. */
export function buildCrl(key: KeyObject, serialsHex: string[], at: Date, window?: { thisUpdate: Date; nextUpdate: Date }): Buffer {
  const thisUpdate = window?.thisUpdate ?? new Date(at.getTime() - 86_400_000);
  const nextUpdate = window?.nextUpdate ?? new Date(at.getTime() + 86_400_000);
  const alg = new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: '1.2.840.10045.4.3.2' })] });
  const name = new asn1js.Sequence({
    value: [new asn1js.Set({ value: [new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: '2.5.4.3' }), new asn1js.Utf8String({ value: 'Asterism test CRL issuer' })] })] })],
  });
  const entries = serialsHex.map((s) => new asn1js.Sequence({ value: [new asn1js.Integer({ valueHex: Buffer.from(s.length % 2 ? `0${s}` : s, 'hex') }), new asn1js.UTCTime({ valueDate: thisUpdate })] }));
  const tbs = new asn1js.Sequence({
    value: [new asn1js.Integer({ value: 1 }), alg, name, new asn1js.UTCTime({ valueDate: thisUpdate }), new asn1js.UTCTime({ valueDate: nextUpdate }), ...(entries.length ? [new asn1js.Sequence({ value: entries })] : [])],
  });
  const tbsDer = Buffer.from(tbs.toBER());
  return Buffer.from(new asn1js.Sequence({ value: [tbs, alg, new asn1js.BitString({ valueHex: sign('sha256', tbsDer, key) })] }).toBER());
}
