/**
 * Test-only: IssueJoinTicket requests with stand-in CSR and host-key bytes, and the parsers that
 * read them (`csr:<node name>`, `ssh-key`), so issuer and parsing specs need no openssl.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { join } from '@asterism/proto';
import type { RequestParsers } from './request-validation.js';

/** The disk UUID of the stub requests. */
export const UUID = '0a1b2c3d-0000-4000-8000-00000000000a';
const STUB_KEY = generateKeyPairSync('ed25519').publicKey;

/** Stand-ins for the CSR and host-key parsers: `csr:<node name>` and `ssh-key`. */
export const STUB_PARSERS: RequestParsers = {
  csr(der) {
    const text = Buffer.from(der).toString();
    if (!text.startsWith('csr:')) throw new Error('CN must start with system:node:');
    return { nodeName: text.slice(4), subjectDer: new ArrayBuffer(0), publicKey: STUB_KEY, ips: [] };
  },
  hostKey(wire) {
    if (Buffer.from(wire).toString() !== 'ssh-key') throw new Error('not an SSH public key');
    return { type: 'stub', wire: Buffer.from(wire), body: Buffer.alloc(0) };
  },
};

/** An IssueJoinTicket request on the wire, with stub CSR and host key. */
export const wireRequest = (over: Partial<join.IssueJoinTicketRequest> = {}): join.IssueJoinTicketRequest => ({
  diskUuid: UUID,
  certificateRequest: Buffer.from('csr:node'),
  isControlPlane: false,
  hostPublicKey: Buffer.from('ssh-key'),
  hostCertificatePrincipals: ['10.0.0.5', 'node'],
  ...over,
});
