import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAuthorizedKeyLine, parseSshCertificate, sshCaFromSeed } from '@asterism/crypto';
import { NodeFileWriter } from '../state/file-writer.js';
import { KubeletCsrGenerator } from './kubelet-csr.js';
import { EmergencySshSetup, HostKeyFile, SSH_HOST_KEY_PATH } from './ssh.js';

describe('node identity', () => {
  it('kubelet CSRs are what openssl and the joinservice expect; the key is SEC1 PEM', async () => {
    const { csrDer, privateKeyPem } = await new KubeletCsrGenerator().create('worker-1', ['10.0.0.7']);
    const dir = mkdtempSync(join(tmpdir(), 'csr-'));
    writeFileSync(join(dir, 'k.csr'), csrDer);
    const text = execFileSync('openssl', ['req', '-inform', 'DER', '-in', join(dir, 'k.csr'), '-noout', '-text', '-verify'], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
    assert.match(text, /Subject: O ?= ?system:nodes, CN ?= ?system:node:worker-1/);
    assert.match(text, /IP Address:10\.0\.0\.7/);
    assert.match(text, /prime256v1|P-256/);
    assert.match(privateKeyPem, /^-----BEGIN EC PRIVATE KEY-----/);
  });

  it('installs the emergency SSH CA and a host certificate for the ssh-keygen host key', async () => {
    const root = mkdtempSync(join(tmpdir(), 'node-'));
    const files = new NodeFileWriter(root);
    mkdirSync(join(root, 'var/run/state/ssh'), { recursive: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', files.resolve(SSH_HOST_KEY_PATH)]);
    const hostKey = new HostKeyFile(files);
    const seed = Buffer.alloc(32, 3);
    await new EmergencySshSetup(files, hostKey).install(seed, ['10.0.0.7', 'control-plane-0']);
    assert.deepEqual(parseAuthorizedKeyLine(readFileSync(join(root, 'var/run/state/ssh/ssh_ca.pub'), 'utf8')), sshCaFromSeed(seed).publicWire);
    const cert = parseSshCertificate(parseAuthorizedKeyLine(readFileSync(join(root, 'var/run/state/ssh/ssh_host_cert.pub'), 'utf8')));
    assert.ok(cert.signatureValid);
    assert.deepEqual(cert.principals, ['10.0.0.7', 'control-plane-0']);
    assert.deepEqual(await hostKey.publicKeyWire(), parseAuthorizedKeyLine(readFileSync(`${files.resolve(SSH_HOST_KEY_PATH)}.pub`, 'utf8')));
    await assert.rejects(new EmergencySshSetup(files, hostKey).install(seed, ['x']), /EEXIST|exists/, 'files are create-exclusive');
  });

  it('names the failing step for a missing or broken host key', async () => {
    const root = mkdtempSync(join(tmpdir(), 'node-'));
    const files = new NodeFileWriter(root);
    await assert.rejects(new HostKeyFile(files).publicKeyWire(), /failed to read host SSH key: ENOENT/);
    mkdirSync(join(root, 'var/run/state/ssh'), { recursive: true });
    writeFileSync(files.resolve(SSH_HOST_KEY_PATH), 'garbage');
    await assert.rejects(new HostKeyFile(files).publicKeyWire(), /failed to parse host SSH key/);
  });
});
