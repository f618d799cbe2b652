import { authorizedKeyLine, signHostCertificate, sshCaFromSeed, type SshPublicKey, type SshSigner } from '@asterism/crypto';
import type { SshHostCertSigner } from '../ticket/ports.js';

/**
 * The emergency SSH CA of join tickets (docs/protocol/join-ticket.md, IssueJoinTicket step 2): the CA from the keyservice seed
 * signs a host certificate for the node's host key. Both are returned as authorized_keys lines.
 * The CA key derived from the seed is kept while the seed stays the same (it is derived from the
 * master secret, so it normally never changes): no key derivation per ticket.
 */
export class EmergencySshCa implements SshHostCertSigner {
  #ca: { seed: Buffer; signer: SshSigner; publicLine: Buffer } | undefined;

  async sign(seed: Buffer, hostKey: SshPublicKey, principals: string[]): Promise<{ caPublicKey: Buffer; certificate: Buffer }> {
    const ca = this.#caFor(seed);
    const cert = signHostCertificate({ ca: ca.signer, hostKeyWire: hostKey, principals });
    return { caPublicKey: ca.publicLine, certificate: Buffer.from(authorizedKeyLine(cert)) };
  }

  #caFor(seed: Buffer): { seed: Buffer; signer: SshSigner; publicLine: Buffer } {
    if (this.#ca?.seed.equals(seed)) return this.#ca;
    const signer = sshCaFromSeed(seed);
    this.#ca = { seed: Buffer.from(seed), signer, publicLine: Buffer.from(authorizedKeyLine(signer.publicWire)) };
    return this.#ca;
  }
}
