/**
 * A running real node's vTPM from the host (its swtpm socket), for the continuous-attestation
 * scenarios (docs/protocol/continuous-attestation.md): extend a PCR as a changed boot would, and
 * an issuer that opens the vTPM for one document and closes it again (swtpm serves one connection
 * at a time; the node's verification-service pod needs it too).
 */
import { createHash } from 'node:crypto';
import { QemuVtpmIssuer, Variant, type Issuer } from '@asterism/attestation';
import { SocketTransport, TPM_ALG, TpmClient } from '@asterism/tpm';
import { ClusterLayout } from '../layout.js';

/** Extends `pcr` of the node's vTPM with SHA256(label); returns the PCR's new value (hex). */
export async function extendNodePcr(root: string, node: string, pcr: number, label: string): Promise<string> {
  const tpm = new TpmClient(await SocketTransport.connect({ path: new ClusterLayout(root).tpmSocket(node) }));
  try {
    await tpm.pcrExtend(pcr, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update(label).digest() }]);
    return Buffer.from((await tpm.pcrRead([pcr])).get(pcr)!).toString('hex');
  } finally {
    await tpm.transport.close();
  }
}

/** A qemu-vtpm issuer over the node's vTPM socket, connected per document. */
export function perDocumentVtpmIssuer(root: string, node: string): Issuer {
  const socket = new ClusterLayout(root).tpmSocket(node);
  return {
    variant: Variant.fromString('qemu-vtpm'),
    async issue(userData, nonce, signal) {
      const tpm = new TpmClient(await SocketTransport.connect({ path: socket }));
      try {
        return await new QemuVtpmIssuer(async () => tpm).issue(userData, nonce, signal);
      } finally {
        await tpm.transport.close();
      }
    },
  };
}
