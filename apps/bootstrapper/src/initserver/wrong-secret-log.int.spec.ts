/**
 * Integration (issue 37, docs/adr/0029): wrong init secrets from many addresses must not grow the
 * node's log by a line (or two) each. 50 loopback addresses (127.0.0.10-59) each send wrong init
 * secrets to an InitServer over real aTLS, with the real JSON logger at the default level; the
 * log's bytes are counted. Before: ~430 B per wrong secret (an info line on arrival and an error
 * line with the failure). Now: the first refusal of an interval and one summary line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import bcrypt from 'bcryptjs';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { atlsChannelCredentials, atlsServerCredentials } from '@asterism/atls';
import { encodeClusterKmsUri } from '@asterism/crypto';
import { createLogger } from '@asterism/logger';
import { NodeLock } from '@asterism/nodelock';
import { init } from '@asterism/proto';
import { NodeFileWriter } from '../state/file-writer.js';
import { InitFlow } from './init-flow.js';
import { InitServer } from './init-server.js';

const ADDRESSES = 50;
const PER_ADDRESS = 3;

it(`${ADDRESSES} addresses x ${PER_ADDRESS} wrong init secrets: the node log grows by a few lines, not one per secret`, async () => {
  let bytes = 0;
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => ((bytes += chunk.length), lines.push(chunk.toString()), cb()) });
  const logger = createLogger({ component: 'bootstrapper', stream: sink });
  const untouched = () => Promise.reject(new Error('must not be reached with a wrong secret'));
  const flow = new InitFlow({
    initSecretHash: bcrypt.hashSync('the right secret', 4),
    lock: new NodeLock({ markNodeAsBootstrapped: untouched }),
    disk: { uuid: untouched, updatePassphrase: untouched, markForReset: untouched },
    files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'wrong-secret-'))),
    ssh: { install: untouched },
    identity: { read: untouched },
    host: { addresses: untouched, hostname: untouched },
    cluster: { initCluster: untouched },
    diskBinding: { bind: untouched },
    onLocked: () => undefined,
    logger,
  });
  const server = new InitServer(flow, { read: async function* () { yield Buffer.alloc(0); } }, logger);
  const port = await server.listen('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer(), logger }));
  const req = init.InitRequest.fromPartial({ kmsUri: encodeClusterKmsUri({ key: Buffer.alloc(32, 1), salt: Buffer.alloc(32, 2) }), storageUri: 'storage://no-store', measurementSalt: Buffer.alloc(32, 3), initSecret: Buffer.from('wrong') });
  const codes: Record<string, number> = {};
  try {
    await Promise.all(
      Array.from({ length: ADDRESSES }, async (_, i) => {
        const client = new init.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ validators: [new DummyValidator()], localAddress: `127.0.0.${10 + i}` }));
        for (let n = 0; n < PER_ADDRESS; n++) {
          const code = await new Promise<grpc.status>((resolve) => {
            const stream = client.init(req, { deadline: Date.now() + 60_000 });
            stream.on('data', () => undefined);
            stream.on('error', (e: grpc.ServiceError) => resolve(e.code));
            stream.on('end', () => resolve(grpc.status.OK));
          });
          codes[grpc.status[code]] = (codes[grpc.status[code]] ?? 0) + 1;
        }
        client.close();
      }),
    );
  } finally {
    server.server.forceShutdown();
  }
  const wrong = ADDRESSES * PER_ADDRESS;
  console.log(`[wrong-secret-log] ${wrong} wrong secrets from ${ADDRESSES} addresses: ${JSON.stringify(codes)}, log ${bytes} B in ${lines.length} lines (${(bytes / wrong).toFixed(1)} B per wrong secret; before issue 37 ~430 B)`);
  assert.equal(codes.PERMISSION_DENIED, wrong, JSON.stringify(codes));
  assert.ok(lines.length <= 4, `${lines.length} log lines:\n${lines.join('')}`);
  assert.ok(bytes / wrong < 10, `${bytes} B for ${wrong} wrong secrets`);
});
