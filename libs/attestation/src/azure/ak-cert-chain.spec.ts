import assert from 'node:assert/strict';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it, before } from 'node:test';
import { AttestationError } from '../errors.js';
import { makeAkCert, makeCa, makeRoot, type Issued } from './ak-pki.fixture.js';
import { caIssuerUrls, verifyAkCertificateChain, type AkChainInput } from './ak-cert-chain.js';
import { defaultTrustedLaunchRoots } from '../variants/azure-trustedlaunch.js';

const DAY = 24 * 3600_000;
const NOW = new Date();
const akSpki = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'der' });

describe('azure-trustedlaunch AK certificate chain', () => {
  let root: Issued;
  let expiredRoot: Issued;
  let otherRoot: Issued;
  let ca: Issued;
  let upper: Issued;
  let lower: Issued;
  let caOfExpiredRoot: Issued;
  let impostorCa: Issued;
  let ak: X509Certificate;
  let akViaTwo: X509Certificate;
  let akOfExpiredRoot: X509Certificate;
  let akExpired: X509Certificate;
  let akOfImpostor: X509Certificate;
  const served = new Map<string, Buffer>();
  const fetcher = async (url: string) => {
    const der = served.get(url);
    if (!der) throw new Error(`404 ${url}`);
    return der;
  };

  before(async () => {
    root = await makeRoot('test root');
    otherRoot = await makeRoot('other root');
    // Like the reference's AME root: valid 2016-05-24 to 2026-05-24.
    expiredRoot = await makeRoot('ameroot-like', { notBefore: new Date('2016-05-24T00:00:00Z'), notAfter: new Date('2026-05-24T00:00:00Z') });
    ca = await makeCa('issuing CA', root, 'http://ca.test/root.crt');
    upper = await makeCa('upper CA', root);
    lower = await makeCa('lower CA', upper, 'http://ca.test/upper.crt');
    caOfExpiredRoot = await makeCa('CA under old root', expiredRoot, undefined, { notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date(NOW.getTime() + 365 * DAY) });
    impostorCa = await makeCa('issuing CA', await makeRoot('test root'));
    ak = await makeAkCert(akSpki, ca, ['http://ca.test/missing.crt', 'http://ca.test/issuing.crt']);
    akViaTwo = await makeAkCert(akSpki, lower, ['http://ca.test/lower.crt']);
    akOfExpiredRoot = await makeAkCert(akSpki, caOfExpiredRoot, []);
    akExpired = await makeAkCert(akSpki, ca, [], { notBefore: new Date(NOW.getTime() - 10 * DAY), notAfter: new Date(NOW.getTime() - DAY) });
    akOfImpostor = await makeAkCert(akSpki, impostorCa, []);
    served.set('http://ca.test/issuing.crt', ca.der);
    served.set('http://ca.test/lower.crt', lower.der);
    served.set('http://ca.test/upper.crt', upper.der);
  });

  it('reads the CA Issuers URLs in order', () => {
    assert.deepEqual(caIssuerUrls(ak), ['http://ca.test/missing.crt', 'http://ca.test/issuing.crt']);
  });

  type Case = [name: string, input: () => AkChainInput, code: string | null, rootCn?: string];
  const cases: Case[] = [
    ['document CA chains to the configured root', () => ({ akCert: ak, intermediates: [ca.node], roots: [root.node], at: NOW }), null, 'test root'],
    ['CA fetched from the second CA Issuers URL', () => ({ akCert: ak, intermediates: [], roots: [root.node], at: NOW, fetcher }), null, 'test root'],
    ['two links fetched (lower, then upper CA)', () => ({ akCert: akViaTwo, intermediates: [], roots: [root.node], at: NOW, fetcher }), null, 'test root'],
    ['one of several configured roots', () => ({ akCert: ak, intermediates: [ca.node], roots: [otherRoot.node, root.node], at: NOW }), null, 'test root'],
    ['wrong root', () => ({ akCert: ak, intermediates: [ca.node], roots: [otherRoot.node], at: NOW }), 'CERT_CHAIN_INVALID'],
    ['no CA and no fetcher', () => ({ akCert: ak, intermediates: [], roots: [root.node], at: NOW }), 'CERT_CHAIN_INVALID'],
    ['CA with the right name but another key', () => ({ akCert: akOfImpostor, intermediates: [impostorCa.node], roots: [root.node], at: NOW }), 'CERT_CHAIN_INVALID'],
    ['AK certificate with a CA it was not issued by', () => ({ akCert: akOfImpostor, intermediates: [ca.node], roots: [root.node], at: NOW }), 'CERT_CHAIN_INVALID'],
    ['root expired (2026-05-24) at verification time', () => ({ akCert: akOfExpiredRoot, intermediates: [caOfExpiredRoot.node], roots: [expiredRoot.node], at: NOW }), 'ROOT_EXPIRED'],
    ['same chain before the root expired', () => ({ akCert: akOfExpiredRoot, intermediates: [caOfExpiredRoot.node], roots: [expiredRoot.node], at: new Date('2026-05-01T00:00:00Z') }), null, 'ameroot-like'],
    ['AK certificate expired', () => ({ akCert: akExpired, intermediates: [ca.node], roots: [root.node], at: NOW }), 'CERT_EXPIRED'],
  ];
  for (const [name, input, code, rootCn] of cases) {
    it(name, async () => {
      const run = verifyAkCertificateChain(input());
      if (code === null) {
        const chosen = await run;
        assert.match(chosen.subject, new RegExp(`CN=${rootCn}`));
      } else {
        await assert.rejects(run, (e: unknown) => e instanceof AttestationError && e.code === code);
      }
    });
  }

  describe('Microsoft\'s published vTPM root and "Global Virtual TPM CA - 03" (real certificates)', () => {
    const ca03 = new X509Certificate(readFileSync(new URL('./testdata/global-virtual-tpm-ca-03.pem', import.meta.url)));
    const [msRoot] = defaultTrustedLaunchRoots();
    it('the embedded default root is the pinned certificate', () => {
      assert.equal(msRoot!.fingerprint256, 'E6:C5:96:B1:7F:8F:FE:FB:A5:C3:00:F7:14:CF:B1:26:0C:60:28:70:4E:CF:7B:EC:C4:AB:50:18:EF:B0:0E:95');
      assert.match(msRoot!.subject, /CN=Azure Virtual TPM Root Certificate Authority 2023/);
    });
    const real: Array<[string, Date, string | null]> = [
      ['verifies (RSA-4096/SHA-384) in November 2026', new Date('2026-11-01T00:00:00Z'), null],
      ['CA 03 expired by May 2027', new Date('2027-05-01T00:00:00Z'), 'CERT_EXPIRED'],
      ['root expired in 2049', new Date('2049-01-01T00:00:00Z'), 'ROOT_EXPIRED'],
    ];
    for (const [name, at, code] of real) {
      it(name, async () => {
        const run = verifyAkCertificateChain({ akCert: ca03, intermediates: [], roots: [msRoot!], at });
        if (code === null) await run;
        else await assert.rejects(run, (e: unknown) => e instanceof AttestationError && e.code === code);
      });
    }
  });
});
