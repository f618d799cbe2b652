import { readFile } from 'node:fs/promises';
import { authorizedKeyLine, parseOpenSshPrivateKey, signHostCertificate, sshCaFromSeed } from '@asterism/crypto';
import type { SshSetup } from '../initserver/ports.js';
import type { HostKeySource } from '../joinclient/ports.js';
import { NODE_PATHS } from '../state/node-paths.js';
import type { NodeFileWriter } from '../state/file-writer.js';

/** The node's SSH host key file (OpenSSH ed25519 private key). */
export const SSH_HOST_KEY_PATH = '/var/run/state/ssh/ssh_host_ed25519_key';

/** Reads the host key under the node's root; errors name the reference's steps. */
export class HostKeyFile implements HostKeySource {
  constructor(private readonly files: NodeFileWriter) {}

  private async signer() {
    let pem: string;
    try {
      pem = await readFile(this.files.resolve(SSH_HOST_KEY_PATH), 'utf8');
    } catch (err) {
      throw new Error(`failed to read host SSH key: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      return parseOpenSshPrivateKey(pem);
    } catch (err) {
      throw new Error(`failed to parse host SSH key: ${(err as Error).message}`);
    }
  }

  async publicKeyWire(): Promise<Buffer> {
    return (await this.signer()).publicWire;
  }
}

/**
 * The first control plane's emergency SSH (docs/protocol/bootstrapper.md, InitServer step 8): CA from the seed, its
 * authorized_keys line to ssh_ca.pub, a host certificate for the node's host key.
 */
export class EmergencySshSetup implements SshSetup {
  constructor(
    private readonly files: NodeFileWriter,
    private readonly hostKey: HostKeySource,
  ) {}

  async install(seed: Buffer, principals: string[]): Promise<void> {
    const ca = sshCaFromSeed(seed);
    await this.files.writeExclusive(NODE_PATHS.sshCaPublicKey, authorizedKeyLine(ca.publicWire));
    const cert = signHostCertificate({ ca, hostKeyWire: await this.hostKey.publicKeyWire(), principals });
    await this.files.writeExclusive(NODE_PATHS.sshHostCertificate, authorizedKeyLine(cert));
  }
}
