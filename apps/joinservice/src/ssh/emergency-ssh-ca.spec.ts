import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAuthorizedKeyLine, parseSshCertificate, sshCaFromSeed } from '@asterism/crypto';
import { EmergencySshCa } from './emergency-ssh-ca.js';

describe('EmergencySshCa', () => {
  const seed = Buffer.alloc(32, 7);
  const host = sshCaFromSeed(Buffer.alloc(32, 8)).publicWire;

  it('returns the CA and a verifying host certificate as authorized_keys lines', async () => {
    const { caPublicKey, certificate } = await new EmergencySshCa().sign(seed, host, ['10.0.0.2', 'w']);
    assert.deepEqual(parseAuthorizedKeyLine(caPublicKey.toString()), sshCaFromSeed(seed).publicWire);
    const cert = parseSshCertificate(parseAuthorizedKeyLine(certificate.toString()));
    assert.ok(cert.signatureValid);
    assert.equal(cert.type, 2);
    assert.equal(cert.keyId, '10.0.0.2');
  });

  it('validates host keys and refuses short seeds', async () => {
    const ca = new EmergencySshCa();
    assert.doesNotThrow(() => ca.assertValidPublicKey(host));
    assert.throws(() => ca.assertValidPublicKey(Buffer.from('junk')), /SSH public key/);
    await assert.rejects(ca.sign(Buffer.alloc(31), host, ['a']), /need 32/);
  });
});
