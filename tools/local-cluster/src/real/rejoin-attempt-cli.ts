/**
 * An IssueRejoinTicket attempt attested by a real node's vTPM (its swtpm socket, opened per
 * document and closed), against the joinservice forward on 127.0.0.1:30090: shows what a
 * quarantined node gets (docs/protocol/continuous-attestation.md). Prints the status code, the
 * reason metadata and the details.
 * Usage: node --import tsx tools/local-cluster/src/real/rejoin-attempt-cli.ts <node> <disk uuid> [--dir .local-cluster]
 */
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { atlsChannelCredentials } from '@asterism/atls';
import { join as joinApi } from '@asterism/proto';
import { perDocumentVtpmIssuer } from './vtpm-access.js';

const [node, diskUuid] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dirIdx = process.argv.indexOf('--dir');
const root = dirIdx > 0 ? process.argv[dirIdx + 1]! : join(process.cwd(), '.local-cluster');
if (!node || !diskUuid) {
  process.stderr.write('usage: rejoin-attempt-cli.ts <node> <disk uuid> [--dir <cluster folder>]\n');
  process.exit(2);
}
const issuer = perDocumentVtpmIssuer(root, node);
const client = new joinApi.APIClient('127.0.0.1:30090', atlsChannelCredentials({ issuer }));
client.issueRejoinTicket({ diskUuid }, new grpc.Metadata(), { deadline: Date.now() + 30_000 }, (err) => {
  if (!err) process.stdout.write(`${node}: rejoin ticket ISSUED\n`);
  else process.stdout.write(`${node}: rejoin refused: code ${grpc.status[err.code]} reason ${String(err.metadata.get('x-asterism-reason')[0] ?? '-')}: ${err.details}\n`);
  client.close();
  process.exit(0);
});
