import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { eventually } from '@asterism/testing';
import { akTemplateRsa, encodePublic, type TpmtPublic } from '@asterism/tpm';
import type { AzureSevSnpConfig, IdKeyDigestEnforcement } from '../config/types.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { makeExtraData } from '../extra-data.js';
import { encodeDocument } from '../vtpm/document.js';
import { AzureSevSnpValidator } from './azure-sev-snp.js';
import { certificateBytes } from '../snp/certs.js';
import { SnpCollateral } from '../snp/collateral.js';
import { checkHclAttestationKey } from '../snp/hcl.js';
import { encodeSnpInstanceInfo, type SnpInstanceInfo } from '../snp/instance-info.js';
import { JwksMaaTokenVerifier } from '../snp/maa.js';
import { AZURE_VECTOR_TIME, goldenSnp } from '../snp/golden-vectors.fixture.js';

const golden = goldenSnp();
const runtimeKey = JSON.parse(golden.runtimeData.toString('utf8')).keys[0] as { n: string; e: string };
const REAL_ID_KEY_DIGEST = Buffer.from(golden.azureReport.subarray(0xe0, 0xe0 + 48));

/** An RSA TPMT_PUBLIC with the given modulus and exponent (TPM 0 = 65537). */
function rsaKey(modulus: Buffer, exponent = 0): TpmtPublic {
  const t = akTemplateRsa();
  if (t.type !== 0x0001) throw new Error('template is not RSA');
  return { ...t, rsa: { ...t.rsa, exponent }, modulus };
}

/** The real Azure HCL attestation key: keys[0] of the recorded runtime data. */
const REAL_AK = rsaKey(Buffer.from(runtimeKey.n, 'base64url'));

function config(enforcementPolicy: IdKeyDigestEnforcement = 'Equal', digests = [REAL_ID_KEY_DIGEST]): AzureSevSnpConfig {
  return {
    variant: 'azure-sev-snp',
    measurements: new Measurements(),
    bootloaderVersion: { value: 2, wantLatest: false },
    teeVersion: { value: 0, wantLatest: false },
    snpVersion: { value: 6, wantLatest: false },
    microcodeVersion: { value: 93, wantLatest: false },
    amdRootKey: certificateBytes(golden.arkPem, 'ARK'),
    amdSigningKey: null,
    firmwareSignerConfig: { acceptedKeyDigests: digests, enforcementPolicy, maaURL: '' },
  };
}

interface DocumentParts {
  readonly ak?: TpmtPublic;
  readonly runtimeData?: Buffer;
  readonly info?: Partial<SnpInstanceInfo>;
  readonly maaToken?: string;
}

/**
 * A document around the real Azure evidence: the real SNP report, VCEK and chain from THIM, the
 * real HCL runtime data, and as ak_pub the real HCL AK. It has no TPM quote: the quote of that AK
 * was never recorded and a software TPM cannot sign as it.
 */
function document(p: DocumentParts = {}): Buffer {
  const info = encodeSnpInstanceInfo({
    reportSigner: Buffer.from(golden.vcekPem),
    certChain: Buffer.from(golden.certChainPem),
    attestationReport: Buffer.from(golden.azureReport),
    azure: { runtimeData: p.runtimeData ?? golden.runtimeData, maaToken: p.maaToken ?? '' },
    gcp: null,
    ...p.info,
  });
  return encodeDocument({
    attestation: {
      akPub: encodePublic(p.ak ?? REAL_AK),
      quotes: [],
      eventLog: Buffer.alloc(0),
      instanceInfo: null,
      canonicalEventLog: Buffer.alloc(0),
      akCert: Buffer.alloc(0),
      intermediateCerts: [],
      teeAttestation: null,
    },
    instanceInfo: info,
    userData: Buffer.from('user data'),
  });
}

const validator = (c = config()) => new AzureSevSnpValidator(c, NOP_ATTESTATION_LOGGER, { collateral: new SnpCollateral({ offline: true }), now: () => AZURE_VECTOR_TIME });

const refusedWith = (code: string, re?: RegExp, details?: Record<string, unknown>) => (e: unknown) => {
  assert.ok(e instanceof AttestationError, `expected AttestationError, got ${String(e)}`);
  assert.equal(e.code, code, e.message);
  if (re) assert.match(e.message, re);
  for (const [k, v] of Object.entries(details ?? {})) assert.deepEqual(e.details[k], v, `details.${k}`);
  return true;
};

describe('azure-sev-snp validator on the real Azure evidence (pinned clock, offline collateral)', () => {
  // The AK trust decision (SNP report, VCEK chain, REPORT_DATA == SHA-256(runtime data), ID key
  // digest, HCL AK == ak_pub) comes before the quote. The real evidence passes all of it; what a
  // software AK cannot provide is the TPM quote signed by Azure's HCL AK, so the furthest the real
  // document gets is QUOTE_MISSING - which proves every SNP and HCL check above passed.
  it('the real report + VCEK + chain + runtime data + HCL AK pass every SNP/HCL check and stop only at the (unrecordable) quote', async () => {
    await assert.rejects(validator().validate(document(), randomBytes(32)), refusedWith('QUOTE_MISSING'));
  });

  it('WarnOnly accepts an unknown ID key digest and also reaches the quote', async () => {
    await assert.rejects(validator(config('WarnOnly', [Buffer.alloc(48, 1)])).validate(document(), randomBytes(32)), refusedWith('QUOTE_MISSING'));
  });

  const otherModulus = Buffer.from(REAL_AK.type === 0x0001 ? REAL_AK.modulus : Buffer.alloc(0));
  otherModulus[10]! ^= 0x01;
  const tampered = JSON.parse(golden.runtimeData.toString('utf8')) as { keys: Array<Record<string, string>> };
  tampered.keys[0]!['kid'] = 'HCLAkPub-tampered';

  const cases: Array<{ name: string; parts?: DocumentParts; config?: AzureSevSnpConfig; code: string; re: RegExp; details?: Record<string, unknown> }> = [
    {
      name: 'ak_pub is another RSA key (HCL AK != AK)',
      parts: { ak: rsaKey(otherModulus) },
      code: 'AK_MISMATCH',
      re: /runtime data key modulus is not the attestation key/,
      details: { field: 'RuntimeData.keys[0].n' },
    },
    {
      name: 'ak_pub has the HCL modulus but exponent 3',
      parts: { ak: rsaKey(Buffer.from(runtimeKey.n, 'base64url'), 3) },
      code: 'AK_MISMATCH',
      re: /exponent 65537 is not the attestation key's 3/,
      details: { field: 'RuntimeData.keys[0].e', expected: 3, actual: 65537 },
    },
    {
      name: 'runtime data changed (no longer bound to REPORT_DATA)',
      parts: { runtimeData: Buffer.from(JSON.stringify(tampered)) },
      code: 'REPORT_DATA_MISMATCH',
      re: /SHA-256 of the HCL runtime data/,
      details: { field: 'reportData' },
    },
    { name: 'ID key digest not accepted (Equal)', config: config('Equal', [Buffer.alloc(48, 1)]), code: 'ID_KEY_UNTRUSTED', re: /don't contain reported idkeydigest/ },
    { name: 'MAAFallback without a token verifier', config: config('MAAFallback', [Buffer.alloc(48, 1)]), code: 'ID_KEY_UNTRUSTED', re: /no MAA token verifier/ },
    { name: 'no Azure section in the instance info', parts: { info: { azure: null } }, code: 'DOCUMENT_MALFORMED', re: /no Azure section/ },
    { name: 'no VCEK and no KDS (offline, uncached)', parts: { info: { reportSigner: Buffer.alloc(0) } }, code: 'COLLATERAL_UNAVAILABLE', re: /./ },
    { name: 'microcodeVersion 94 required', config: { ...config(), microcodeVersion: { value: 94, wantLatest: false } }, code: 'TCB_TOO_LOW', re: /microcode: 93 vs 94/ },
  ];
  for (const c of cases) {
    it(`refuses: ${c.name} -> ${c.code}`, async () => {
      await assert.rejects(validator(c.config).validate(document(c.parts), randomBytes(32)), refusedWith(c.code, c.re, c.details));
    });
  }
});

describe('HCL AK exponent rule (little-endian e, TPM 0 = 65537)', () => {
  const n = Buffer.from(runtimeKey.n, 'base64url');
  const runtime = (e: string) => Buffer.from(JSON.stringify({ keys: [{ kid: 'HCLAkPub', kty: 'RSA', n: runtimeKey.n, e }] }));
  const cases: Array<[string, string, number, string | null]> = [
    ['65537 as AQAB with TPM exponent 0', 'AQAB', 0, null],
    ['65537 as 4 little-endian bytes AQABAA', 'AQABAA', 65537, null],
    ['65539 little-endian (03 00 01)', Buffer.from([3, 0, 1]).toString('base64url'), 65539, null],
    ['65539 written big-endian (01 00 03) is 196609', Buffer.from([1, 0, 3]).toString('base64url'), 65539, 'AK_MISMATCH'],
    ['a 5-byte exponent', Buffer.from([1, 0, 1, 0, 0]).toString('base64url'), 0, 'AK_MISMATCH'],
    ['an empty exponent', '', 0, 'AK_MISMATCH'],
    ['e that is not base64url', 'AQ+B', 0, 'DOCUMENT_MALFORMED'],
  ];
  for (const [name, e, exponent, code] of cases) {
    it(`${name}: ${code ?? 'accepted'}`, () => {
      const check = () => checkHclAttestationKey(runtime(e), rsaKey(n, exponent));
      if (code === null) check();
      else assert.throws(check, refusedWith(code));
    });
  }
  it('runtime data without keys is DOCUMENT_MALFORMED', () => {
    assert.throws(() => checkHclAttestationKey(Buffer.from('{"keys":[]}'), REAL_AK), refusedWith('DOCUMENT_MALFORMED', /HCLAkPub/));
  });
});

describe('VCEK and chain sent with a report are kept for later evidence without them', () => {
  it('offline collateral: after one report with VCEK + chain, the same chip/TCB verifies with neither (and only one VCEK is cached)', async () => {
    const collateral = new SnpCollateral({ offline: true });
    const v = new AzureSevSnpValidator(config(), NOP_ATTESTATION_LOGGER, { collateral, now: () => AZURE_VECTOR_TIME });
    const bare = document({ info: { reportSigner: Buffer.alloc(0), certChain: Buffer.alloc(0) } });
    await assert.rejects(v.validate(bare, randomBytes(32)), refusedWith('COLLATERAL_UNAVAILABLE'));
    await assert.rejects(v.validate(document(), randomBytes(32)), refusedWith('QUOTE_MISSING'));
    await eventually('the VCEK is cached', async () => (collateral.vcek.keys().length === 1 ? true : undefined), 5000);
    await assert.rejects(v.validate(document(), randomBytes(32)), refusedWith('QUOTE_MISSING'));
    assert.deepEqual(collateral.chains.keys(), ['vcek/Milan']);
    await assert.rejects(v.validate(bare, randomBytes(32)), refusedWith('QUOTE_MISSING'));
  });
});

describe('azure-sev-snp MAAFallback: an unknown ID key digest is accepted through an MAA token for this document', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = JSON.stringify({ keys: [{ kid: 'maa-1', ...publicKey.export({ format: 'jwk' }) }] });
  const fetchJwks = (async (url: string) => (url === 'https://maa.test/certs' ? new Response(jwks, { status: 200 }) : new Response('', { status: 404 }))) as typeof fetch;
  const token = (nonce: Buffer) => {
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const signed = `${enc({ alg: 'RS256', kid: 'maa-1' })}.${enc({ exp: AZURE_VECTOR_TIME.getTime() / 1000 + 60, 'x-ms-runtime': { 'client-payload': { nonce: nonce.toString('base64') } } })}`;
    return `${signed}.${sign('sha256', Buffer.from(signed), privateKey).toString('base64url')}`;
  };
  const maaConfig = { ...config('MAAFallback', [Buffer.alloc(48, 1)]), firmwareSignerConfig: { acceptedKeyDigests: [Buffer.alloc(48, 1)], enforcementPolicy: 'MAAFallback' as const, maaURL: 'https://maa.test' } };
  const v = () =>
    new AzureSevSnpValidator(maaConfig, NOP_ATTESTATION_LOGGER, { collateral: new SnpCollateral({ offline: true }), now: () => AZURE_VECTOR_TIME, maa: new JwksMaaTokenVerifier(() => AZURE_VECTOR_TIME, fetchJwks) });

  it('a token for SHA-256(userData || nonce) passes the ID key check (and stops at the quote)', async () => {
    const nonce = randomBytes(32);
    await assert.rejects(v().validate(document({ maaToken: token(makeExtraData(Buffer.from('user data'), nonce)) }), nonce), refusedWith('QUOTE_MISSING'));
  });

  it('a token for another nonce is MAA_TOKEN_INVALID; no token is ID_KEY_UNTRUSTED', async () => {
    const nonce = randomBytes(32);
    await assert.rejects(v().validate(document({ maaToken: token(makeExtraData(Buffer.from('user data'), randomBytes(32))) }), nonce), refusedWith('MAA_TOKEN_INVALID', /nonce does not match/));
    await assert.rejects(v().validate(document(), nonce), refusedWith('ID_KEY_UNTRUSTED', /no MAA token/));
  });
});
