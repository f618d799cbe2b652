import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import { readJoinId } from '@asterism/logger';
import { join } from '@asterism/proto';
import { AtlsJoinServiceDialer } from './atls-dialer.js';

// The first hop of a join's trace: the id the JoinClient logs for an attempt is the one a
// joinservice reads from the call (real aTLS server that verifies the node, loopback only).
describe('AtlsJoinServiceDialer', () => {
  const seen: Array<{ method: string; joinId: string | undefined }> = [];
  const server = new grpc.Server();
  let endpoint = '';

  before(async () => {
    server.addService(join.APIService, {
      issueJoinTicket: (call, cb) => {
        seen.push({ method: 'join', joinId: readJoinId(call.metadata) });
        cb(null, join.IssueJoinTicketResponse.fromPartial({ token: 'abcdef.0123456789abcdef' }));
      },
      issueRejoinTicket: (call, cb) => {
        seen.push({ method: 'rejoin', joinId: readJoinId(call.metadata) });
        cb(null, join.IssueRejoinTicketResponse.fromPartial({}));
      },
    } satisfies join.APIServer);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', atlsServerCredentials({ clientValidators: [new DummyValidator()] }), (err, p) => (err ? reject(err) : resolve(p))),
    );
    endpoint = `127.0.0.1:${port}`;
  });
  after(() => server.forceShutdown());

  const cases: Array<[string, 'join' | 'rejoin', string]> = [
    ['join ticket', 'join', 'join-trace-1'],
    ['rejoin ticket', 'rejoin', 'rejoin-trace-2'],
  ];
  for (const [name, method, joinId] of cases) {
    it(`sends the attempt's join id with a ${name} request`, async () => {
      seen.length = 0;
      const dialer = new AtlsJoinServiceDialer(new DummyIssuer());
      if (method === 'join') {
        const ticket = await dialer.issueJoinTicket(endpoint, join.IssueJoinTicketRequest.fromPartial({ diskUuid: 'x' }), { joinId });
        assert.equal(ticket.token, 'abcdef.0123456789abcdef');
      } else {
        await dialer.issueRejoinTicket(endpoint, { diskUuid: 'x' }, { joinId });
      }
      assert.deepEqual(seen, [{ method, joinId }]);
    });
  }
});
