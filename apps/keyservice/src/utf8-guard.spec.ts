import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { createNopLogger } from '@asterism/logger';
import { kms } from '@asterism/proto';
import { startKeyService, type RunningKeyService } from './service.js';
import { firstInvalidUtf8Field } from './utf8-guard.js';

/** GetDataKeyRequest on the wire with raw id bytes: field 1 (LEN) = id, field 2 (varint) = length. */
function rawRequest(id: Buffer, length = 32): Buffer {
  return Buffer.concat([Buffer.from([0x0a, id.length]), id, Buffer.from([0x10, length])]);
}

const RawClient = grpc.makeGenericClientConstructor(
  { getDataKey: { ...kms.APIService.getDataKey, requestSerialize: (b: Buffer) => b } } as grpc.ServiceDefinition,
  'kms.API',
);

describe('keyservice refuses data key ids that are not UTF-8', () => {
  let svc: RunningKeyService;
  let client: grpc.Client;
  before(async () => {
    svc = await startKeyService({ masterSecret: { key: Buffer.alloc(32, 1), salt: Buffer.alloc(32, 2) }, host: '127.0.0.1', port: 0, metricsPort: -1, logger: createNopLogger() });
    client = new RawClient(`127.0.0.1:${svc.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await svc.stop(0);
  });

  const get = (id: Buffer) =>
    new Promise<{ code: grpc.status; key?: Buffer; details?: string }>((resolve) =>
      (client as unknown as { getDataKey: (r: Buffer, cb: (e: grpc.ServiceError | null, r?: kms.GetDataKeyResponse) => void) => void }).getDataKey(rawRequest(id), (e, r) =>
        resolve(e ? { code: e.code, details: e.details } : { code: grpc.status.OK, key: r!.dataKey }),
      ),
    );

  const cases: [string, string, grpc.status][] = [
    ['lone 0xff', 'ff', grpc.status.INVALID_ARGUMENT],
    ['lone 0xfe', 'fe', grpc.status.INVALID_ARGUMENT],
    ['truncated sequence after ASCII', '6162e282', grpc.status.INVALID_ARGUMENT],
    ['overlong encoding of "/"', 'c0af', grpc.status.INVALID_ARGUMENT],
    ['encoded surrogate', 'eda080', grpc.status.INVALID_ARGUMENT],
    ['U+FFFD itself (valid UTF-8)', 'efbfbd', grpc.status.OK],
    ['a disk UUID', Buffer.from('0a1b2c3d-0000-4000-8000-00000000000a').toString('hex'), grpc.status.OK],
  ];
  for (const [name, hex, code] of cases) {
    it(`${name}: ${grpc.status[code]}`, async () => {
      const res = await get(Buffer.from(hex, 'hex'));
      assert.equal(res.code, code, res.details);
      if (code !== grpc.status.OK) assert.equal(res.details, 'data key ID is not valid UTF-8');
    });
  }

  it('finds the bad field behind other fields and ignores fields it was not asked about', () => {
    const msg = Buffer.concat([Buffer.from([0x10, 0x20]), Buffer.from([0x0a, 1, 0xff])]);
    assert.equal(firstInvalidUtf8Field(msg, [1]), 1);
    assert.equal(firstInvalidUtf8Field(msg, [3]), undefined);
  });
});
