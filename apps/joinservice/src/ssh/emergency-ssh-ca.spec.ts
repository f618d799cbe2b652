import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAuthorizedKeyLine, parseSshCertificate, parseSshPublicKey, sshCaFromSeed } from '@asterism/crypto';
import { DEFAULT_PARSERS } from '../ticket/request-validation.js';
import { EmergencySshCa } from './emergency-ssh-ca.js';

describe('EmergencySshCa', () => {
  const seed = Buffer.alloc(32, 7);
  const host = parseSshPublicKey(sshCaFromSeed(Buffer.alloc(32, 8)).publicWire);

  it('returns the CA and a verifying host certificate as authorized_keys lines', async () => {
    const { caPublicKey, certificate } = await new EmergencySshCa().sign(seed, host, ['10.0.0.2', 'w']);
    assert.deepEqual(parseAuthorizedKeyLine(caPublicKey.toString()), sshCaFromSeed(seed).publicWire);
    const cert = parseSshCertificate(parseAuthorizedKeyLine(certificate.toString()));
    assert.ok(cert.signatureValid);
    assert.equal(cert.type, 2);
    assert.equal(cert.keyId, '10.0.0.2');
  });

  it('keeps the CA for an unchanged seed and rebuilds it when the seed changes', async () => {
    const ca = new EmergencySshCa();
    const cases: Array<[string, Buffer]> = [
      ['first seed', seed],
      ['same seed again (cached CA)', Buffer.from(seed)],
      ['a different seed', Buffer.alloc(32, 9)],
      ['the first seed once more', seed],
    ];
    for (const [name, s] of cases) {
      const { caPublicKey, certificate } = await ca.sign(s, host, ['n']);
      assert.deepEqual(parseAuthorizedKeyLine(caPublicKey.toString()), sshCaFromSeed(s).publicWire, name);
      const cert = parseSshCertificate(parseAuthorizedKeyLine(certificate.toString()));
      assert.ok(cert.signatureValid, name);
      assert.deepEqual(cert.caKeyWire, sshCaFromSeed(s).publicWire, name);
    }
  });

  it('signs the host key the request parser accepted and refuses short seeds', async () => {
    const ca = new EmergencySshCa();
    assert.deepEqual(DEFAULT_PARSERS.hostKey(host.wire).wire, host.wire);
    assert.throws(() => DEFAULT_PARSERS.hostKey(Buffer.from('junk')), /SSH public key/);
    await assert.rejects(ca.sign(Buffer.alloc(31), host, ['a']), /need 32/);
  });
});
