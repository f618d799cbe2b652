import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { missingComponent } from '@asterism/testing';
import {
  authorizedKeyLine,
  parseAuthorizedKeyLine,
  parseOpenSshPrivateKey,
  parseSshCertificate,
  parseSshPublicKey,
  signHostCertificate,
  sshCaFromSeed,
  SshError,
} from './ssh.js';

const haveSshKeygen = spawnSync('ssh-keygen', ['-?']).error === undefined;
const havePyCrypto = spawnSync('python3', ['-c', 'import cryptography.hazmat.primitives.serialization']).status === 0;
/**
 * A python whose cryptography (>= 40) verifies SSH certificate signatures. Debian 12's
 * python3-cryptography is 38, so the venv of tools/scripts/setup.d/40-moto.sh (moto depends on a
 * current cryptography) is the fallback; none found is a missing component (a failure under CI=true).
 */
const pySshCerts = [process.env.ASTERISM_PYTHON, 'python3', join(process.env.ASTERISM_MOTO_VENV ?? join(homedir(), '.cache', 'asterism', 'moto-venv'), 'bin', 'python3')]
  .filter((p): p is string => Boolean(p))
  .find((py) => spawnSync(py, ['-c', 'from cryptography.hazmat.primitives.serialization import load_ssh_public_identity']).status === 0);
const skipPyCerts = pySshCerts ? false : missingComponent('python3 with cryptography >= 40', 'bash tools/scripts/setup.sh (setup.d/40-moto.sh installs one into ~/.cache/asterism/moto-venv)');
const PY_VERIFY_CERT = `import sys
from cryptography.hazmat.primitives.serialization import load_ssh_public_identity
c = load_ssh_public_identity(open(sys.argv[1], "rb").read())
c.verify_cert_signature()
print(c.type, c.valid_principals, c.valid_before)`;
const skipTools = haveSshKeygen && havePyCrypto ? false : missingComponent('ssh-keygen and python3-cryptography', 'apt-get install -y openssh-client python3-cryptography');
const dir = mkdtempSync(join(tmpdir(), 'ssh-'));
const SEED = Buffer.from('3dcce96e5c53e7f1696aca1cd27ed294d0f545b6384abf5fe6fc1ed53980268c', 'hex');

function keygen(name: string, type: string): { pub: Buffer; privPath: string } {
  const privPath = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', '', '-f', privPath]);
  return { pub: parseAuthorizedKeyLine(readFileSync(`${privPath}.pub`, 'utf8')), privPath };
}

describe('SSH CA from seed (docs/protocol/key-hierarchy.md)', () => {
  it('needs 32 bytes and uses only the first 32', () => {
    for (const bad of [Buffer.alloc(0), Buffer.alloc(31)]) assert.throws(() => sshCaFromSeed(bad), (e: unknown) => e instanceof SshError && e.code === 'SSH_SEED_TOO_SHORT');
    assert.deepEqual(sshCaFromSeed(Buffer.concat([SEED, Buffer.alloc(224, 9)])).publicWire, sshCaFromSeed(SEED).publicWire);
    assert.match(authorizedKeyLine(sshCaFromSeed(SEED).publicWire), /^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI[A-Za-z0-9+/=]+\n$/);
  });

  it('derives the same public key as an independent ed25519 implementation (python cryptography)', { skip: skipTools }, () => {
    const py = `from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey as K
from cryptography.hazmat.primitives import serialization as s
print(K.from_private_bytes(bytes.fromhex("${SEED.toString('hex')}")).public_key().public_bytes(s.Encoding.OpenSSH, s.PublicFormat.OpenSSH).decode())`;
    assert.equal(execFileSync('python3', ['-c', py]).toString().trim(), authorizedKeyLine(sshCaFromSeed(SEED).publicWire).trim());
  });
});

describe('OpenSSH host certificates', { skip: skipTools }, () => {
  const ca = sshCaFromSeed(SEED);
  for (const type of ['ed25519', 'ecdsa', 'rsa']) {
    it(`a certificate for an ssh-keygen ${type} host key is accepted by ssh-keygen (which checks the CA signature) and a tampered one is not`, () => {
      const host = keygen(`host-${type}`, type);
      const cert = signHostCertificate({ ca, hostKeyWire: host.pub, principals: ['10.0.0.5', 'worker-1'], validAfter: 1_700_000_000n });
      const file = join(dir, `host-${type}-cert.pub`);
      writeFileSync(file, authorizedKeyLine(cert));
      const listing = execFileSync('ssh-keygen', ['-L', '-f', file]).toString();
      assert.match(listing, /Type: .*-cert-v01@openssh.com host certificate/);
      assert.match(listing, /Serial: 0/);
      assert.match(listing, /Key ID: "10\.0\.0\.5"/);
      assert.match(listing, /Valid: after 2023-11-14/);
      assert.match(listing, /Principals: \n\s+10\.0\.0\.5\n\s+worker-1/);
      assert.match(listing, /Critical Options: \(none\)/);
      assert.match(listing, /Extensions: \(none\)/);
      const parsed = parseSshCertificate(cert);
      assert.equal(parsed.signatureValid, true);
      assert.deepEqual(parsed.principals, ['10.0.0.5', 'worker-1']);
      assert.deepEqual(parsed.caKeyWire, ca.publicWire);
      // A flipped bit in a principal breaks the signature for both verifiers.
      const bad = Buffer.from(cert);
      const at = bad.indexOf(Buffer.from('worker-1'));
      bad[at] = bad[at]! ^ 1;
      assert.equal(parseSshCertificate(bad).signatureValid, false);
      writeFileSync(file, authorizedKeyLine(bad));
      assert.notEqual(spawnSync('ssh-keygen', ['-L', '-f', file]).status, 0, 'ssh-keygen refuses a certificate whose CA signature does not verify');
    });

    it(`python-cryptography verifies the CA signature of a certificate for an ssh-keygen ${type} host key and refuses a tampered one`, { skip: skipPyCerts }, () => {
      const host = keygen(`py-host-${type}`, type);
      const cert = signHostCertificate({ ca, hostKeyWire: host.pub, principals: ['10.0.0.5', 'worker-1'], validAfter: 1_700_000_000n });
      const file = join(dir, `py-host-${type}-cert.pub`);
      writeFileSync(file, authorizedKeyLine(cert));
      assert.match(execFileSync(pySshCerts!, ['-c', PY_VERIFY_CERT, file]).toString(), /SSHCertificateType.HOST \[b'10\.0\.0\.5', b'worker-1'\] 18446744073709551615/);
      const bad = Buffer.from(cert);
      const at = bad.indexOf(Buffer.from('worker-1'));
      bad[at] = bad[at]! ^ 1;
      writeFileSync(file, authorizedKeyLine(bad));
      assert.notEqual(spawnSync(pySshCerts!, ['-c', PY_VERIFY_CERT, file]).status, 0);
    });
  }

  it('reads ssh-keygen ed25519 private keys and matches their public half', () => {
    const host = keygen('host-key', 'ed25519');
    const signer = parseOpenSshPrivateKey(readFileSync(host.privPath, 'utf8'));
    assert.deepEqual(signer.publicWire, host.pub);
    const rsa = keygen('rsa-key', 'rsa');
    assert.throws(() => parseOpenSshPrivateKey(readFileSync(rsa.privPath, 'utf8')), /not supported, want ssh-ed25519/);
    assert.throws(() => parseOpenSshPrivateKey('nope'), (e: unknown) => e instanceof SshError && e.code === 'SSH_PRIVATE_KEY_INVALID');
  });
});

describe('SSH parsing is total', () => {
  const ca = sshCaFromSeed(SEED);
  const cert = signHostCertificate({ ca, hostKeyWire: ca.publicWire, principals: ['a'] });
  it('every truncation and random mutation of keys and certificates throws SshError or parses', () => {
    for (let n = 0; n < cert.length; n++) assert.throws(() => parseSshCertificate(cert.subarray(0, n)), SshError);
    for (let n = 0; n < ca.publicWire.length; n++) assert.throws(() => parseSshPublicKey(ca.publicWire.subarray(0, n)), SshError);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(cert.length - 1), fc.integer({ min: 0, max: 255 }), (junk, at, byte) => {
        const mutated = Buffer.from(cert);
        mutated[at] = byte;
        for (const input of [Buffer.from(junk), mutated]) {
          try {
            parseSshCertificate(input);
          } catch (e) {
            if (!(e instanceof SshError)) throw e;
          }
          try {
            parseSshPublicKey(input);
          } catch (e) {
            if (!(e instanceof SshError)) throw e;
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('rejects unsupported and inconsistent keys with a reason', () => {
    assert.throws(() => parseSshPublicKey(Buffer.alloc(0)), /empty/);
    assert.throws(() => parseSshPublicKey(Buffer.concat([Buffer.from([0, 0, 0, 7]), Buffer.from('ssh-dss')])), /unsupported SSH key type "ssh-dss"/);
    assert.throws(() => signHostCertificate({ ca, hostKeyWire: ca.publicWire, principals: [] }), /at least one principal/);
  });
});
