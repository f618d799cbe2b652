/**
 * InitServer vs JoinClient on one node, racing for the REAL node lock (PCR 15 of a swtpm): an
 * init request and a join ticket arrive at the same moment, many times. Exactly one wins, the
 * other stops cleanly, never both; PCR 15 holds the winner's cluster ID.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { ClusterKms, dataKeyInfo, deriveClusterId, encodeClusterKmsUri, MEASUREMENT_SECRET_KEY_ID, NO_STORE_URI } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import type { InstanceMetadata, MetadataProvider } from '@asterism/metadata';
import { NodeLock, TpmNodeMarker, CLUSTER_ID_PCR } from '@asterism/nodelock';
import type { join as joinpb } from '@asterism/proto';
import { missingComponent } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { Cleaner } from './clean/cleaner.js';
import type { StateDisk } from './disk/state-disk.js';
import { InitFailure, InitFlow } from './initserver/init-flow.js';
import { Backoff } from './joinclient/backoff.js';
import { JoinClient } from './joinclient/join-client.js';
import { NodeFileWriter } from './state/file-writer.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
const logger = createNopLogger();
const SECRET = 'race-init-secret';
const self: InstanceMetadata = { Name: 'node-0', ProviderID: '', Role: 'ControlPlane', VPCIP: '192.0.2.10', SecondaryIPRange: '', AliasIPRanges: null };
const metadata: MetadataProvider = {
  self: async () => self,
  list: async () => [self],
  getLoadBalancerEndpoint: async () => ({ host: '192.0.2.10', port: '6443' }),
  initSecretHash: async () => '',
  uid: async () => '',
};
/**
 * Who arrives first in a round. Every fifth round gives init a head start (the join ticket arrives
 * only after init has finished) and the next one gives the join a head start, so both sides win
 * in every run; the other rounds let both arrive together, 0-3 ms apart by a fixed schedule.
 */
type Order = 'init-first' | 'join-first' | 'together';
const orderOf = (round: number): Order => (round % 5 === 0 ? 'init-first' : round % 5 === 1 ? 'join-first' : 'together');
const offset = (round: number, side: 0 | 1) => new Promise<void>((r) => setTimeout(r, (round * 3 + side * 2) % 4));
const disk: StateDisk = { uuid: async () => '00000000-0000-4000-8000-000000000000', updatePassphrase: async () => undefined, markForReset: async () => undefined };

describe('InitServer vs JoinClient race on a real TPM lock', { skip }, () => {
  let tpm: Swtpm;
  let hash: string;
  before(async () => {
    tpm = await startSwtpm();
    hash = await bcrypt.hash(SECRET, 4);
  });
  after(async () => tpm?.stop());

  it('exactly one wins in every round; PCR 15 carries the winner\'s cluster ID', async () => {
    const tally = { init: 0, join: 0 };
    for (let round = 0; round < 25; round++) {
      await tpm.reboot();
      const lock = new NodeLock(new TpmNodeMarker(() => tpm.client()));
      const cleaner = new Cleaner();
      const root = mkdtempSync(join(tmpdir(), 'race-'));
      const master = { key: Buffer.alloc(32, round), salt: Buffer.alloc(32, 0xa0) };
      const initSalt = Buffer.alloc(32, 0x11);
      const ticketSecret = Buffer.alloc(32, 0x77);
      const ticketSalt = Buffer.alloc(32, 0x22);
      const order = orderOf(round);
      let release!: () => void;
      const go = new Promise<void>((r) => (release = r));
      let initSettled!: () => void;
      const initDone = new Promise<void>((r) => (initSettled = r));
      const flow = new InitFlow({
        initSecretHash: hash,
        lock,
        disk,
        files: new NodeFileWriter(join(root, 'init')),
        ssh: { install: async () => undefined },
        host: { addresses: async () => [], hostname: async () => 'node-0' },
        identity: { read: async () => ({ name: 'node-0', role: 'ControlPlane', ip: '', providerId: '' }) },
        cluster: { initCluster: async () => Buffer.from('kubeconfig') },
        diskBinding: { bind: async () => 'created' },
        onLocked: () => cleaner.clean(),
        logger,
      });
      const joiner = new JoinClient(
        {
          lock,
          metadata,
          disk,
          files: new NodeFileWriter(join(root, 'join')),
          host: { addresses: async () => [], hostname: async () => 'node-0' },
          hostKey: { publicKeyWire: async () => Buffer.alloc(0) },
          csr: { create: async () => ({ csrDer: Buffer.alloc(0), privateKeyPem: 'key' }) },
          probe: { reachable: async () => true },
          cluster: { joinCluster: async () => undefined },
          dialer: {
            issueJoinTicket: async () => {
              await go;
              if (order === 'init-first') await initDone;
              await offset(round, 0);
              return { stateDiskKey: Buffer.alloc(32, 1), measurementSalt: ticketSalt, measurementSecret: ticketSecret, kubeletCert: Buffer.from('c'), apiServerEndpoint: 'x:6443', token: 't', discoveryTokenCaCertHash: 'h', controlPlaneFiles: [], kubernetesVersion: '', kubernetesComponents: [], authorizedCaPublicKey: Buffer.from('a'), hostCertificate: Buffer.from('b') } satisfies joinpb.IssueJoinTicketResponse;
            },
            issueRejoinTicket: async () => assert.fail('no rejoin'),
          },
          onLocked: () => cleaner.clean(),
          logger,
        },
        { backoff: new Backoff(1, 2, 1) },
      );
      cleaner.with(joiner);
      void cleaner.start();
      const joined = joiner.start();
      const joinDone = joined.then(
        () => undefined,
        () => undefined,
      );
      const initRun = go
        .then(() => (order === 'join-first' ? joinDone : undefined))
        .then(() => offset(round, 1))
        .then(() =>
          flow.run({ kmsUri: encodeClusterKmsUri(master), storageUri: NO_STORE_URI, measurementSalt: initSalt, kubernetesVersion: '', conformanceMode: false, kubernetesComponents: [], initSecret: Buffer.from(SECRET), clusterName: '', apiserverCertSans: [], serviceCidr: '' }).then(
            (ok) => ({ ok }),
            (err: unknown) => ({ err }),
          ),
        )
        .finally(() => initSettled());
      release();
      const [joinOutcome, init] = await Promise.all([joined, initRun]);
      await cleaner.done();
      const initWon = 'ok' in init;
      const joinWon = joinOutcome === 'joined';
      assert.ok(initWon !== joinWon, `round ${round}: exactly one winner (init ${initWon}, join ${joinOutcome})`);
      if (order !== 'together') assert.equal(initWon, order === 'init-first', `round ${round} (${order}): the side with the head start wins`);
      if (initWon) {
        tally.init++;
      } else {
        tally.join++;
        const err = (init as { err: unknown }).err;
        // Init either lost the lock (FailedPrecondition) or was never needed.
        assert.ok(err instanceof InitFailure && err.code === 'ALREADY_ACTIVATING', String(err));
      }
      const winnerId = initWon
        ? deriveClusterId(new ClusterKms(master).getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32), initSalt)
        : deriveClusterId(ticketSecret, ticketSalt);
      const pcr15 = (await (await tpm.client()).pcrRead([CLUSTER_ID_PCR], TPM_ALG.SHA256)).get(CLUSTER_ID_PCR)!;
      assert.equal(pcr15.toString('hex'), createHash('sha256').update(Buffer.alloc(32)).update(createHash('sha256').update(winnerId).digest()).digest('hex'), `round ${round}: PCR 15 = winner's cluster ID, extended once`);
    }
    // Both sides won (the head-start rounds make this certain): the race is a race.
    assert.ok(tally.init >= 5 && tally.join >= 5, `both won: ${JSON.stringify(tally)}`);
  });
});
