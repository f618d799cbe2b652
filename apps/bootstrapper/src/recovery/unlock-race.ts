import { deriveClusterId } from '@asterism/crypto';
import type { Logger } from '@asterism/logger';
import type { NodeLock } from '@asterism/nodelock';
import type { RecoveredKeys } from './recovery-server.js';

/** The rejoin client as the race drives it: resolves with the cluster ID after marking the node. */
export interface RejoinPath {
  run(): Promise<Buffer | 'stopped'>;
  stop(): void;
}

/** The recovery server as the race drives it. */
export interface RecoveryPath {
  keys(): Promise<RecoveredKeys | 'stopped'>;
  finish(): void;
}

/** Everything the race is built from. */
export interface UnlockRaceDeps {
  rejoin: RejoinPath;
  recovery: RecoveryPath;
  lock: NodeLock;
  /** Opens the node's state with the recovered disk key (maps a mapped state disk) and resolves the stored measurement salt. */
  openState(diskKey: Uint8Array): Promise<Buffer>;
  logger: Logger;
}

/** Which path delivered the key that opens the state disk, and the cluster ID the node is marked with. */
export type UnlockResult = { by: 'rejoin' | 'recovery'; clusterId: Buffer } | 'stopped';

/**
 * Unlocking the state disk of a rebooted member (docs/protocol/recovery.md): the rejoin client
 * (a joinservice issues the key) and the recovery server (the operator pushes the master secret)
 * run at once; the first to deliver a key that opens the disk wins and the other is stopped.
 * A recovery win re-marks PCR 15 with the cluster ID from the recovered measurement secret and
 * the stored salt, exactly as a rejoin does.
 */
export async function raceForDiskKey(d: UnlockRaceDeps): Promise<UnlockResult> {
  const viaRejoin = d.rejoin.run().then((r) => ({ path: 'rejoin' as const, r }));
  const viaRecovery = d.recovery.keys().then((r) => ({ path: 'recovery' as const, r }));
  const first = await Promise.race([viaRejoin, viaRecovery]);
  if (first.path === 'rejoin') {
    d.recovery.finish();
    if (first.r === 'stopped') return 'stopped';
    return { by: 'rejoin', clusterId: first.r };
  }
  d.rejoin.stop();
  await viaRejoin.catch(() => undefined);
  if (first.r === 'stopped') return 'stopped';
  const clusterId = deriveClusterId(first.r.measurementSecret, await d.openState(first.r.stateDiskKey));
  const lock = await d.lock.tryLockOnce(clusterId, 'recovery');
  d.logger.info('recovered', { clusterId: clusterId.toString('hex'), lock });
  return { by: 'recovery', clusterId };
}
