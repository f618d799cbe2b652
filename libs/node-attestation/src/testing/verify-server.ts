/**
 * Test fixture: a `verify.API` server around a real issuer on an ephemeral loopback port, as a
 * node's verification service answers (docs/protocol/verification.md). `userData` and `nonce`
 * can be overridden to play a misbehaving node.
 */
import * as grpc from '@grpc/grpc-js';
import type { Issuer } from '@asterism/attestation';
import { verify } from '@asterism/proto';
import { VERIFY_USER_DATA } from '../judge.js';

/** A running stand-in verification service. */
export interface VerifyServerFixture {
  endpoint: string;
  /** Documents issued so far. */
  served: number;
  /** Replace the issuer (a node that changed) or the user data / nonce it signs. */
  issuer: Issuer;
  userData: Buffer;
  replayNonce: Buffer | undefined;
  stop(): Promise<void>;
}

/** Starts the server on 127.0.0.1 (port 0 = ephemeral). */
export async function startVerifyServer(issuer: Issuer, port = 0): Promise<VerifyServerFixture> {
  const server = new grpc.Server();
  const f: VerifyServerFixture = {
    endpoint: '',
    served: 0,
    issuer,
    userData: VERIFY_USER_DATA,
    replayNonce: undefined,
    stop: () => new Promise<void>((r) => server.tryShutdown(() => r())),
  };
  server.addService(verify.APIService, {
    getAttestation: (call: grpc.ServerUnaryCall<verify.GetAttestationRequest, verify.GetAttestationResponse>, cb: grpc.sendUnaryData<verify.GetAttestationResponse>) => {
      f.served++;
      f.issuer
        .issue(f.userData, f.replayNonce ?? call.request.nonce)
        .then((doc) => cb(null, { attestation: Buffer.from(doc) }))
        .catch((err: Error) => cb({ code: grpc.status.INTERNAL, details: err.message }));
    },
  } as verify.APIServer);
  const bound = await new Promise<number>((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  f.endpoint = `127.0.0.1:${bound}`;
  return f;
}
