import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyValidator, Variant, type Issuer } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { atlsChannelCredentials, atlsServerCredentials, ATLS_MAX_EVIDENCE_BYTES } from './index.js';
import { getDataKey, startStubServer, type StubServer } from './services.fixture.js';

// Client evidence travels base64-encoded in a header. Node's default HTTP/2 header list limit
// (64 KiB) refused anything over ~46 KiB with a bare REFUSED_STREAM; real event logs can be larger.

/** A dummy document padded to about `bytes` (the dummy validator ignores unknown fields). */
function paddedIssuer(bytes: number): Issuer {
  return {
    variant: Variant.fromString('dummy'),
    issue: async (userData, nonce) =>
      Buffer.from(JSON.stringify({ UserData: Buffer.from(userData).toString('base64'), Nonce: Buffer.from(nonce).toString('base64'), Pad: 'x'.repeat(bytes) })),
  };
}

const servers: StubServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function serve(): Promise<StubServer> {
  const s = await startStubServer(atlsServerCredentials({ clientValidators: [new DummyValidator()] }));
  servers.push(s);
  return s;
}

describe('client evidence size', () => {
  for (const [name, bytes, ok] of [
    ['48 KiB (refused before)', 48 * 1024, true],
    ['96 KiB', 96 * 1024, true],
    ['just under the limit', ATLS_MAX_EVIDENCE_BYTES - 1024, true],
    ['over the limit', ATLS_MAX_EVIDENCE_BYTES + 1024, false],
  ] as const) {
    it(`${name}: ${ok ? 'accepted' : 'refused by the client with EVIDENCE_TOO_LARGE'}`, async () => {
      const s = await serve();
      const client = new kms.APIClient(s.address, atlsChannelCredentials({ issuer: paddedIssuer(bytes) }));
      try {
        const res = await getDataKey(client);
        if (ok) assert.ok(res.ok, res.ok ? '' : res.details);
        else {
          assert.equal(res.ok, false);
          assert.equal(!res.ok && res.code, grpc.status.UNAVAILABLE);
          assert.match(!res.ok ? res.details : '', /\[EVIDENCE_TOO_LARGE\] client evidence is \d+ bytes, the limit is 131072/);
        }
      } finally {
        client.close();
      }
    });
  }

  it('a client that ignores the limit gets UNAUTHENTICATED with the reason from the server', async () => {
    const s = await serve();
    const client = new kms.APIClient(s.address, atlsChannelCredentials({}));
    try {
      const md = new grpc.Metadata();
      for (let i = 0; i < 4; i++) md.add('x-atls-attestation-bin', Buffer.alloc(32 * 1024));
      md.add('x-atls-attestation-bin', Buffer.alloc(1024)); // 129 KiB in chunk-sized values
      const err = await new Promise<grpc.ServiceError | null>((resolve) => client.getDataKey({ dataKeyId: 'k', length: 16 }, md, (e) => resolve(e)));
      assert.equal(err?.code, grpc.status.UNAUTHENTICATED);
      assert.match(err?.details ?? '', /\[EVIDENCE_TOO_LARGE\]/);
      assert.equal(err?.metadata.get('x-atls-reason')[0], 'EVIDENCE_TOO_LARGE');
    } finally {
      client.close();
    }
  });
});
