// Test-only helpers (not exported from index.ts): stub kms/init services, misbehaving issuers and
// validators, and call wrappers returning the gRPC status instead of throwing.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator, Variant, type Issuer, type Validator } from '@asterism/attestation';
import { init, kms } from '@asterism/proto';
import type { AtlsServerCredentials } from './server-credentials.js';

/** The `via` each stub call saw, for assertions. */
export interface StubServer {
  server: grpc.Server;
  address: string;
  vias: string[];
  close(): Promise<void>;
}

/** kms.API/GetDataKey (unary) and init.API/Init (server streaming) stubs on 127.0.0.1:0. */
export async function startStubServer(credentials: grpc.ServerCredentials): Promise<StubServer> {
  const server = new grpc.Server();
  const vias: string[] = [];
  const peerVia = (call: { getPeer(): string }) => (credentials as AtlsServerCredentials).peerOf?.(call)?.via ?? 'n/a';
  server.addService(kms.APIService, {
    getDataKey: (call: grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) => {
      vias.push(peerVia(call));
      const evidence = call.metadata.get('x-atls-attestation-bin');
      if (evidence.length > 0) return cb({ code: grpc.status.INTERNAL, details: 'evidence metadata leaked to handler' });
      cb(null, { dataKey: createHash('sha256').update(call.request.dataKeyId).digest().subarray(0, call.request.length) });
    },
  } satisfies kms.APIServer);
  server.addService(init.APIService, {
    init: (call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>) => {
      vias.push(peerVia(call));
      call.write({ log: { log: Buffer.from('step 1') } });
      call.write({ log: { log: Buffer.from('step 2') } });
      call.write({ initSuccess: { kubeconfig: Buffer.from(call.request.clusterName), ownerId: Buffer.alloc(0), clusterId: Buffer.alloc(32, 1) } });
      call.end();
    },
  } satisfies init.APIServer);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))));
  return {
    server,
    address: `127.0.0.1:${port}`,
    vias,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** Outcome of a call: the response or the status error. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; code: grpc.status; details: string; reason?: string };

/** One GetDataKey call. */
export function getDataKey(client: kms.APIClient, dataKeyId = 'k'): Promise<Outcome<Buffer>> {
  return new Promise((resolve) =>
    client.getDataKey({ dataKeyId, length: 16 }, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) =>
      resolve(err ? failed(err) : { ok: true, value: res!.dataKey }),
    ),
  );
}

/** One Init call, collecting the streamed messages. */
export async function initStream(client: init.APIClient): Promise<Outcome<init.InitResponse[]>> {
  const out: init.InitResponse[] = [];
  try {
    for await (const m of client.init(init.InitRequest.fromPartial({ clusterName: 'c1' }), { deadline: Date.now() + 10_000 }) as AsyncIterable<init.InitResponse>) out.push(m);
    return { ok: true, value: out };
  } catch (err) {
    return failed(err as grpc.ServiceError);
  }
}

function failed(err: grpc.ServiceError): Outcome<never> {
  return { ok: false, code: err.code, details: err.details, reason: err.metadata?.get('x-atls-reason')[0] as string | undefined };
}

/** Issues real dummy documents but lets a test tamper with the inputs or the output. */
export class TamperingIssuer implements Issuer {
  readonly variant: Variant;
  readonly nonces: Buffer[] = [];
  #first?: Uint8Array;

  constructor(
    private readonly mode: 'honest' | 'replay-first' | 'random-nonce' | 'random-user-data' | 'fail',
    variant = 'dummy',
  ) {
    this.variant = Variant.fromString(variant);
  }

  async issue(userData: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
    this.nonces.push(Buffer.from(nonce));
    const inner = new DummyIssuer();
    switch (this.mode) {
      case 'honest':
        return inner.issue(userData, nonce);
      case 'replay-first':
        this.#first ??= await inner.issue(userData, nonce);
        return this.#first;
      case 'random-nonce':
        return inner.issue(userData, Buffer.alloc(32, 0xaa));
      case 'random-user-data':
        return inner.issue(Buffer.alloc(32, 0xbb), nonce);
      case 'fail':
        throw new Error('no TPM here');
    }
  }
}

/** A dummy-format validator under another variant's OID (for OID-mismatch cases). */
export function dummyValidatorAs(variant: string): Validator {
  const inner = new DummyValidator();
  return { variant: Variant.fromString(variant), validate: (doc, nonce) => inner.validate(doc, nonce) };
}

/** A validator that never answers unless aborted. */
export function hangingValidator(): Validator {
  return {
    variant: Variant.fromString('dummy'),
    validate: (_doc, _nonce, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
  };
}
