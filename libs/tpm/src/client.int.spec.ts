import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { X509Certificate, type KeyObject } from 'node:crypto';
import { missingComponent } from '@asterism/testing';
import { TPM_ALG } from './constants.js';
import { softwareExtend, range, type TpmClient } from './client.js';
import { QuoteVerificationError, TpmResponseError } from './errors.js';
import { publicKeyObject, publicName, type TpmtPublic } from './structures/public.js';
import { encodePublic } from './structures/public.js';
import { akTemplateEcc, akTemplateRsa } from './templates.js';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, tpm2ToolsAvailable, type Swtpm } from './testing/swtpm.fixture.js';
import { verifyQuote } from './verify.js';

const run = promisify(execFile);
const skip = swtpmAvailable() && tpm2ToolsAvailable() ? false : missingComponent('swtpm and tpm2-tools', SWTPM_INSTALL_HINT);
const ZERO = Buffer.alloc(32);
const AK_ATTRS = 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign';

describe('TpmClient against swtpm', { skip }, () => {
  let tpm: Swtpm;
  let c: TpmClient;
  before(async () => {
    tpm = await startSwtpm();
    c = await tpm.client();
  });
  after(async () => tpm?.stop());

  /** Runs a tpm2-tools command on this swtpm (our connection is closed meanwhile). */
  async function tool(cmd: string, args: string[]): Promise<string> {
    await tpm.disconnect();
    try {
      const { stdout } = await run(cmd, args, { env: { ...process.env, TPM2TOOLS_TCTI: tpm.tcti } });
      return stdout;
    } finally {
      c = await tpm.client();
    }
  }

  it('reads all 24 PCRs of every allocated bank (looping past 8 per call)', async () => {
    const banks = await c.pcrBanks();
    assert.deepEqual(banks.map((b) => b.hashAlg), [TPM_ALG.SHA1, TPM_ALG.SHA256, TPM_ALG.SHA384, TPM_ALG.SHA512]);
    for (const b of banks) {
      const v = await c.pcrRead(range(24), b.hashAlg);
      assert.equal(v.size, 24);
      assert.deepEqual([...v.keys()].sort((x, y) => x - y), range(24));
    }
  });

  it('PCR_Extend equals a software SHA-256 extend, and tpm2_pcrread agrees', async () => {
    const before = (await c.pcrRead([16]))!.get(16)!;
    const d1 = createHash('sha256').update('one').digest();
    const d2 = createHash('sha256').update('two').digest();
    await c.pcrExtend(16, [{ hashAlg: TPM_ALG.SHA256, digest: d1 }]);
    await c.pcrExtend(16, [{ hashAlg: TPM_ALG.SHA256, digest: d2 }]);
    const expected = softwareExtend(softwareExtend(before, d1), d2);
    assert.deepEqual((await c.pcrRead([16])).get(16), expected);
    const out = await tool('tpm2_pcrread', ['sha256:16']);
    assert.match(out, new RegExp(`16 *: 0x${expected.toString('hex')}`, 'i'));
  });

  it('PCR_Event extends every bank with H_bank(data)', async () => {
    const data = Buffer.from('cluster-id-bytes');
    const old256 = (await c.pcrRead([23], TPM_ALG.SHA256)).get(23)!;
    const old384 = (await c.pcrRead([23], TPM_ALG.SHA384)).get(23)!;
    const digests = await c.pcrEvent(23, data);
    assert.equal(digests.length, 4);
    assert.deepEqual((await c.pcrRead([23], TPM_ALG.SHA256)).get(23), softwareExtend(old256, createHash('sha256').update(data).digest()));
    assert.deepEqual((await c.pcrRead([23], TPM_ALG.SHA384)).get(23), softwareExtend(old384, createHash('sha384').update(data).digest(), TPM_ALG.SHA384));
  });

  it('GetCapability: properties and handles', async () => {
    assert.ok(((await c.getProperty(0x12c)) ?? 0) >= 512);
    assert.equal(await c.getProperty(0x112), 24);
    assert.deepEqual(await c.listHandles(0x81000000), []);
  });

  for (const hierarchy of ['owner', 'endorsement'] as const) {
    for (const kind of ['rsa', 'ecc'] as const) {
      it(`${kind} AK in the ${hierarchy} hierarchy has the name tpm2-tools computes for the same template`, async () => {
        const ak = await c.createAttestationKey(kind, hierarchy);
        await c.flushContext(ak.handle);
        assert.deepEqual(ak.name, publicName(ak.public));
        const ctx = join(tpm.dir, 'ak.ctx');
        const args = ['-C', hierarchy === 'owner' ? 'o' : 'e', '-g', 'sha256', '-G', kind === 'rsa' ? 'rsa2048:rsassa-sha256:null' : 'ecc256:ecdsa-sha256:null', '-a', AK_ATTRS, '-c', ctx];
        if (kind === 'ecc') {
          // tpm2-tools reads -u as the in-memory TPMS_ECC_POINT: u16le size + 128-byte buffer, twice.
          const le32 = Buffer.from([32, 0]);
          writeFileSync(join(tpm.dir, 'unique.bin'), Buffer.concat([le32, Buffer.alloc(128), le32, Buffer.alloc(128)]));
          args.push('-u', join(tpm.dir, 'unique.bin'));
        }
        await tool('tpm2_createprimary', args);
        const out = await tool('tpm2_readpublic', ['-c', ctx]);
        await tool('tpm2_flushcontext', ['-t']);
        assert.match(out, new RegExp(`^name: ${ak.name.toString('hex')}$`, 'm'));
        // And ReadPublic of a loaded AK returns the same name and public area.
        const again = await c.createAttestationKey(kind, hierarchy);
        const rp = await c.readPublic(again.handle);
        await c.flushContext(again.handle);
        assert.deepEqual(rp.name, ak.name);
        assert.deepEqual(rp.publicBytes, ak.publicBytes);
      });
    }
  }

  for (const kind of ['rsa', 'ecc'] as const) {
    it(`${kind}: a quote over all 24 SHA-256 PCRs verifies here and with tpm2_checkquote; wrong nonce, changed PCR and flipped bit are rejected`, async () => {
      const ak = await c.createAttestationKey(kind, 'owner');
      const nonce = randomBytes(32);
      const q = await c.quote(ak.handle, nonce, [{ hashAlg: TPM_ALG.SHA256, pcrs: range(24) }]);
      await c.flushContext(ak.handle);
      const pcrs = await c.pcrRead(range(24));
      verifyQuote({ akPublic: ak.publicBytes, attest: q.attestBytes, signature: q.signatureBytes, nonce, pcrs });

      const f = (n: string) => join(tpm.dir, `${kind}.${n}`);
      writeFileSync(f('pem'), publicKeyObject(ak.public).export({ type: 'spki', format: 'pem' }));
      writeFileSync(f('msg'), q.attestBytes);
      writeFileSync(f('sig'), q.signatureBytes);
      const pcrFile = Buffer.concat(range(24).map((p) => pcrs.get(p)!));
      writeFileSync(f('pcrs'), pcrFile);
      const check = (nonceHex: string, msg = f('msg')) => tool('tpm2_checkquote', ['-u', f('pem'), '-m', msg, '-s', f('sig'), '-g', 'sha256', '-q', nonceHex]);
      await check(nonce.toString('hex'));
      await assert.rejects(check(randomBytes(32).toString('hex')));

      const code = (cd: string) => (e: unknown) => e instanceof QuoteVerificationError && e.code === cd;
      assert.throws(() => verifyQuote({ akPublic: ak.publicBytes, attest: q.attestBytes, signature: q.signatureBytes, nonce: randomBytes(32), pcrs }), code('QUOTE_NONCE_MISMATCH'));
      const changed = new Map(pcrs).set(7, Buffer.alloc(32, 1));
      assert.throws(() => verifyQuote({ akPublic: ak.publicBytes, attest: q.attestBytes, signature: q.signatureBytes, nonce, pcrs: changed }), code('QUOTE_PCR_DIGEST_MISMATCH'));
      const flipped = Buffer.from(q.attestBytes);
      flipped[flipped.length - 5]! ^= 0x10;
      assert.throws(() => verifyQuote({ akPublic: ak.publicBytes, attest: flipped, signature: q.signatureBytes, nonce, pcrs }), code('QUOTE_SIGNATURE_INVALID'));
      writeFileSync(f('flipped'), flipped);
      await assert.rejects(check(nonce.toString('hex'), f('flipped')));
    });
  }

  it('quotes the endorsement-hierarchy AK with readable clock info', async () => {
    const ak = await c.createAttestationKey('ecc', 'endorsement');
    const q = await c.quote(ak.handle, Buffer.alloc(32, 1), [{ hashAlg: TPM_ALG.SHA256, pcrs: [0] }]);
    await c.flushContext(ak.handle);
    assert.ok(q.attest.clockInfo.resetCount < 10, `resetCount ${q.attest.clockInfo.resetCount} looks obfuscated`);
    assert.deepEqual(q.attest.qualifiedSigner.subarray(0, 2), Buffer.from('000b', 'hex'));
  });

  it('serialises 200 concurrent commands on one connection', async () => {
    const results = await Promise.all(range(200).map((i) => (i % 2 ? c.pcrRead([0, 1, 2]) : c.getProperty(0x112))));
    assert.equal(results.filter((r) => r === 24).length, 100);
  });

  it('typed response codes: flushing an unknown handle', async () => {
    await assert.rejects(c.flushContext(0x80ffffff), (e: unknown) => e instanceof TpmResponseError && e.code === 'TPM_RC' && /TPM2_FlushContext failed: TPM_RC_(HANDLE|VALUE)/.test(e.message));
  });

  it('reboot (CMD_INIT) resets PCRs and keeps the primary seeds (same AK name)', async () => {
    const ak1 = await c.createAttestationKey('rsa', 'owner');
    await c.flushContext(ak1.handle);
    await c.pcrExtend(15, [{ hashAlg: TPM_ALG.SHA256, digest: Buffer.alloc(32, 5) }]);
    assert.notDeepEqual((await c.pcrRead([15])).get(15), ZERO);
    await tpm.reboot();
    c = await tpm.client();
    assert.deepEqual((await c.pcrRead([15])).get(15), ZERO);
    const ak2 = await c.createAttestationKey('rsa', 'owner');
    await c.flushContext(ak2.handle);
    assert.deepEqual(ak2.name, ak1.name);
  });
});

/**
 * The TCG default EK template for RSA 2048 (TCG EK Credential Profile, template L-1): restricted
 * decryption key with AES-128-CFB, the PolicySecret(endorsement) auth policy and a zero unique.
 */
const EK_TEMPLATE_RSA_2048: TpmtPublic = {
  type: TPM_ALG.RSA,
  nameAlg: TPM_ALG.SHA256,
  objectAttributes: 0x000300b2,
  authPolicy: Buffer.from('837197674484b3f81a90cc8d46a5d724fd52d76e06520b64f2a1da1b331469aa', 'hex'),
  rsa: { symmetric: { algorithm: TPM_ALG.AES, keyBits: 128, mode: TPM_ALG.CFB }, scheme: { scheme: TPM_ALG.NULL }, keyBits: 2048, exponent: 0 },
  modulus: Buffer.alloc(256),
};

describe('NV_Read of the EK certificate (swtpm_setup-provisioned TPM)', { skip }, () => {
  it('reads a DER certificate whose key is the EK', async () => {
    const tpm = await startSwtpm({ ekCert: true });
    try {
      const c = await tpm.client();
      const handles = await c.listHandles(0x01000000);
      assert.ok(handles.length > 0, 'swtpm_setup defined NV indices');
      const cert = await c.readEkCertificate('RSA_2048');
      assert.ok(cert, `no RSA EK certificate among NV indices ${handles.map((h) => h.toString(16)).join(',')}`);
      const x = new X509Certificate(cert);
      assert.match(x.issuer, /swtpm/i);
      // The EK itself, created from the TCG default RSA template in the endorsement hierarchy: the
      // certificate must certify exactly this key.
      const ek = await c.createPrimary('endorsement', EK_TEMPLATE_RSA_2048);
      const spki = (k: KeyObject) => k.export({ type: 'spki', format: 'der' }).toString('hex');
      assert.equal(spki(x.publicKey), spki(publicKeyObject(ek.public)), 'the EK certificate certifies the TPM\'s EK');
      await c.flushContext(ek.handle);
    } finally {
      await tpm.stop();
    }
  });
});

describe('AK template bytes', () => {
  it('differ between RSA and ECC and have the go-tpm-tools attributes', () => {
    assert.notDeepEqual(encodePublic(akTemplateRsa()), encodePublic(akTemplateEcc()));
    assert.equal(akTemplateRsa().objectAttributes, 0x00050072);
  });
});
