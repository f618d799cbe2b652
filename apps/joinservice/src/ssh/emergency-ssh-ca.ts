import { authorizedKeyLine, parseSshPublicKey, signHostCertificate, sshCaFromSeed } from '@asterism/crypto';
import type { SshHostCertSigner } from '../ticket/ports.js';
import type { HostKeyValidator } from '../ticket/request-validation.js';

/**
 * The emergency SSH CA of join tickets (docs/protocol/join-ticket.md, IssueJoinTicket step 2): the CA from the keyservice seed
 * signs a host certificate for the node's host key. Both are returned as authorized_keys lines.
 */
export class EmergencySshCa implements SshHostCertSigner, HostKeyValidator {
  async sign(seed: Buffer, hostPublicKey: Uint8Array, principals: string[]): Promise<{ caPublicKey: Buffer; certificate: Buffer }> {
    const ca = sshCaFromSeed(seed);
    const cert = signHostCertificate({ ca, hostKeyWire: hostPublicKey, principals });
    return { caPublicKey: Buffer.from(authorizedKeyLine(ca.publicWire)), certificate: Buffer.from(authorizedKeyLine(cert)) };
  }

  assertValidPublicKey(wire: Uint8Array): void {
    parseSshPublicKey(wire);
  }
}
