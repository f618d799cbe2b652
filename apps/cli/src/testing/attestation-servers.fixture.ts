/**
 * Loopback servers a node runs, for CLI tests over the real gRPC paths: the verification
 * service (verify.API, plain gRPC, docs/protocol/verification.md) and the recovery server
 * (recoverproto.API over aTLS with the node attesting, docs/protocol/recovery.md), each with the
 * issuer under test.
 */
import * as grpc from '@grpc/grpc-js';
import type { Issuer } from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import { recoverproto, verify } from '@asterism/proto';
import { VERIFY_USER_DATA } from '../verify/running-node.js';

/** A server listening on 127.0.0.1. */
export interface LoopbackGrpc {
  readonly endpoint: string;
  stop(): Promise<void>;
}

async function bind(server: grpc.Server, credentials: grpc.ServerCredentials): Promise<LoopbackGrpc> {
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (err, p) => (err ? reject(err) : resolve(p))));
  return { endpoint: `127.0.0.1:${port}`, stop: () => new Promise((resolve) => server.tryShutdown(() => resolve())) };
}

/** verify.API/GetAttestation answering with `issuer`'s document over "VerifyService" and the caller's nonce; counts the calls. */
export async function startVerifyServer(issuer: Issuer): Promise<LoopbackGrpc & { calls: () => number }> {
  const server = new grpc.Server();
  let calls = 0;
  server.addService(verify.APIService, {
    getAttestation: (call: grpc.ServerUnaryCall<verify.GetAttestationRequest, verify.GetAttestationResponse>, done: grpc.sendUnaryData<verify.GetAttestationResponse>) => {
      calls++;
      issuer.issue(VERIFY_USER_DATA, call.request.nonce).then(
        (attestation) => done(null, { attestation: Buffer.from(attestation) }),
        (err: unknown) => done({ code: grpc.status.INTERNAL, details: (err as Error).message }),
      );
    },
  });
  return { ...(await bind(server, grpc.ServerCredentials.createInsecure())), calls: () => calls };
}

/** recoverproto.API/Recover over aTLS attested by `issuer`; accepts every request and counts them. */
export async function startRecoveryServer(issuer: Issuer): Promise<LoopbackGrpc & { calls: () => number }> {
  const server = new grpc.Server();
  let calls = 0;
  server.addService(recoverproto.APIService, {
    recover: (_call: grpc.ServerUnaryCall<recoverproto.RecoverMessage, recoverproto.RecoverResponse>, done: grpc.sendUnaryData<recoverproto.RecoverResponse>) => {
      calls++;
      done(null, {});
    },
  });
  return { ...(await bind(server, atlsServerCredentials({ issuer }))), calls: () => calls };
}
