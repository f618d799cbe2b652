import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { AtlsServerCredentials } from '@asterism/atls';
import { init, kms } from '@asterism/proto';

/** A grpc-js server with stub kms.API/GetDataKey and init.API/Init on 127.0.0.1:0. */
export interface StubServer {
  address: string;
  /** How each call's peer was verified (`peerOf(call).via`), in call order. */
  vias: string[];
  close(): Promise<void>;
}

/** GetDataKey answers sha256(data_key_id)[:length], the same as the Go peer's server. */
export async function startStubServer(credentials: AtlsServerCredentials): Promise<StubServer> {
  const server = new grpc.Server();
  const vias: string[] = [];
  server.addService(kms.APIService, {
    getDataKey: (call: grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) => {
      vias.push(credentials.peerOf(call)?.via ?? 'n/a');
      cb(null, { dataKey: createHash('sha256').update(call.request.dataKeyId).digest().subarray(0, call.request.length) });
    },
  } satisfies kms.APIServer);
  server.addService(init.APIService, {
    init: (call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>) => {
      vias.push(credentials.peerOf(call)?.via ?? 'n/a');
      call.write({ log: { log: Buffer.from('step 1') } });
      call.write({ log: { log: Buffer.from('step 2') } });
      call.write({ initSuccess: { kubeconfig: Buffer.from(call.request.clusterName), ownerId: Buffer.alloc(0), clusterId: Buffer.alloc(32, 1) } });
      call.end();
    },
  } satisfies init.APIServer);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))));
  return { address: `127.0.0.1:${port}`, vias, close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}
