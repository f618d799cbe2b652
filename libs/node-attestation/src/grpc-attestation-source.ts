import * as grpc from '@grpc/grpc-js';
import { verify } from '@asterism/proto';
import { fromStatus } from '@asterism/service-runtime';
import type { AttestationSource } from './node-check.js';

/** The verification service's reasons (status metadata, docs/adr/0027). */
const VERIFY_REASONS = ['INVALID_REQUEST'] as const;

/** verify.API/GetAttestation over plain gRPC; the nonce inside the document gives freshness. */
export class GrpcAttestationSource implements AttestationSource {
  async getAttestation(endpoint: string, nonce: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    const client = new verify.APIClient(endpoint, grpc.credentials.createInsecure());
    try {
      return await new Promise<Uint8Array>((resolve, reject) => {
        if (signal.aborted) return reject(new Error('deadline exceeded before the call'));
        const call = client.getAttestation({ nonce: Buffer.from(nonce) }, (err, res) => (err ? reject(fromStatus(err, VERIFY_REASONS)) : resolve(res.attestation)));
        signal.addEventListener('abort', () => call.cancel(), { once: true });
      });
    } finally {
      client.close();
    }
  }
}
