import * as grpc from '@grpc/grpc-js';
import { ClusterKms, type KmsConfig, dataKeyInfo, MEASUREMENT_SECRET_KEY_ID, parseKmsUri, parseStorageUri, stateDiskKeyId, STATE_DISK_KEY_LENGTH, DERIVED_KEY_LENGTH_DEFAULT } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import { recoverproto } from '@asterism/proto';
import { GrpcServer, PeerRateLimiter, peerHost, RefusalLog, toStatus } from '@asterism/service-runtime';
import { masterSecretLengthProblem } from '../initserver/init-request.js';
import { KeyCheckQueue, KeyCheckRefused } from './key-check-queue.js';

/** The port the reference's recovery server listens on (docs/protocol/recovery.md). */
export const RECOVERY_PORT = 9999;

/** Why a Recover call was refused; each maps to one gRPC status at the boundary (toStatus, docs/adr/0027). */
export type RecoveryErrorCode = 'NOT_WAITING' | 'KMS_URI_INVALID' | 'MASTER_SECRET_INVALID' | 'TOO_MANY_ATTEMPTS' | 'KEY_CHECK_BUSY' | 'KEY_DOES_NOT_OPEN_DISK' | 'DISK_UNAVAILABLE';

/** A refused Recover call (never carries key material). */
export class RecoveryError extends AsterismError<RecoveryErrorCode> {}

const STATUS: Record<RecoveryErrorCode, grpc.status> = {
  NOT_WAITING: grpc.status.FAILED_PRECONDITION,
  KMS_URI_INVALID: grpc.status.INVALID_ARGUMENT,
  MASTER_SECRET_INVALID: grpc.status.INVALID_ARGUMENT,
  TOO_MANY_ATTEMPTS: grpc.status.RESOURCE_EXHAUSTED,
  KEY_CHECK_BUSY: grpc.status.RESOURCE_EXHAUSTED,
  KEY_DOES_NOT_OPEN_DISK: grpc.status.PERMISSION_DENIED,
  DISK_UNAVAILABLE: grpc.status.INTERNAL,
};

/** The state disk as recovery needs it: its UUID and a check that a key opens its LUKS header. */
export interface RecoveryDisk {
  uuid(): Promise<string>;
  testPassphrase(passphrase: Uint8Array): Promise<boolean>;
}

/** What a successful recovery hands to the disk unlock. */
export interface RecoveredKeys {
  stateDiskKey: Buffer;
  measurementSecret: Buffer;
}

/** Options of the recovery server (docs/adr/0029). */
export interface RecoveryServerOptions {
  /**
   * Recover attempts per client address, like the InitServer's init secret attempts: a call takes
   * a token before its key check, so wrong master secrets count. Default: 5 at once, one every 2 s.
   */
  attempts?: PeerRateLimiter;
  /** The disk's key checks: one at a time, bounded queue, places reserved for fresh addresses. */
  keyChecks?: KeyCheckQueue;
  /** Aggregated refusal lines (one per reason and interval). */
  refusalLog?: RefusalLog;
}

/**
 * recoverproto.API on a rebooted node whose state disk is still locked (docs/protocol/recovery.md).
 * A Recover call carries the cluster KMS URI; the node derives its measurement secret and its
 * state disk key, and only accepts them when the key opens the disk's LUKS header (a wrong
 * master secret is refused and changes nothing). The first accepted call resolves {@link keys}.
 * Calls are checked before any disk work (URIs, master secret and salt lengths), limited per
 * address (RESOURCE_EXHAUSTED after a few wrong secrets) and their key checks serialised
 * (docs/adr/0029); refusals are logged aggregated.
 */
export class RecoveryServer {
  readonly server: grpc.Server;
  readonly #shape: GrpcServer;
  #waiting = true;
  #resolve!: (k: RecoveredKeys | 'stopped') => void;
  readonly #keys = new Promise<RecoveredKeys | 'stopped'>((resolve) => (this.#resolve = resolve));
  readonly #attempts: PeerRateLimiter;
  readonly #keyChecks: KeyCheckQueue;
  readonly #refusals: RefusalLog;
  #uuid: Promise<string> | undefined;

  constructor(
    private readonly disk: RecoveryDisk,
    private readonly logger: Logger,
    options: RecoveryServerOptions = {},
  ) {
    this.#attempts = options.attempts ?? new PeerRateLimiter(0.5, 5);
    this.#keyChecks = options.keyChecks ?? new KeyCheckQueue();
    this.#refusals = options.refusalLog ?? new RefusalLog(logger, 'recovery refused');
    // The one server shape (docs/adr/0027); no health service (the reference's recovery server has
    // none). Call lines at debug: the handler logs each request and refusal itself.
    this.#shape = new GrpcServer({ logger, okCallLogLevel: 'debug', failedCallLogLevel: 'debug' });
    this.server = this.#shape.server;
    this.server.addService(recoverproto.APIService, {
      recover: (call: grpc.ServerUnaryCall<recoverproto.RecoverMessage, recoverproto.RecoverResponse>, done: grpc.sendUnaryData<recoverproto.RecoverResponse>) => {
        const gone = new AbortController();
        call.once('cancelled', () => gone.abort());
        this.recover(call.request, call.getPeer(), gone.signal).then(
          () => done(null, {}),
          (err: unknown) => {
            const status = toStatus(err, STATUS);
            if (status.internal) this.logger.error('recovery failed', { peer: call.getPeer(), err });
            done(status);
          },
        );
      },
    });
  }

  /** Binds `address`; resolves with the bound port. */
  listen(address: string, credentials: grpc.ServerCredentials): Promise<number> {
    return this.#shape.bind(address, credentials);
  }

  /** Refused Recover calls so far, by reason (for the node's status file). */
  get refusedCalls(): Readonly<Record<string, number>> {
    return this.#refusals.totals;
  }

  /** The key checks' queue (peak concurrency, for tests and reports). */
  get keyChecks(): KeyCheckQueue {
    return this.#keyChecks;
  }

  /** Resolves with the first accepted keys, or 'stopped' once {@link finish} was called first. */
  keys(): Promise<RecoveredKeys | 'stopped'> {
    return this.#keys;
  }

  /** The node no longer waits for recovery (unlocked by either path): later calls are refused. */
  finish(): void {
    this.#waiting = false;
    this.#resolve('stopped');
  }

  /** Stops serving (in-flight calls complete). */
  close(): Promise<void> {
    this.finish();
    return this.#shape.drain();
  }

  private async recover(req: recoverproto.RecoverMessage, peer: string, gone: AbortSignal): Promise<void> {
    if (!this.#waiting) throw notWaiting();
    const kms = clusterKms(req);
    this.#takeAttempt(peer);
    this.logger.info('recovery request received', { peer });
    const uuid = await this.#diskUuid();
    const stateDiskKey = kms.getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH);
    const opens = await this.#checkKey(peer, stateDiskKey, gone);
    if (!opens) {
      this.#refusals.refused('KEY_DOES_NOT_OPEN_DISK', { peer });
      throw new RecoveryError('KEY_DOES_NOT_OPEN_DISK', "the key derived from this master secret does not open the node's state disk (wrong master secret or salt?); nothing was changed", { details: { diskUuid: uuid } });
    }
    if (!this.#waiting) throw notWaiting();
    this.#attempts.refund(peer);
    this.#waiting = false;
    const measurementSecret = kms.getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), DERIVED_KEY_LENGTH_DEFAULT);
    this.logger.info('recovery accepted: the derived key opens the state disk', { peer, diskUuid: uuid });
    this.#resolve({ stateDiskKey, measurementSecret });
  }

  // Before any disk work: over its budget, an address is refused without a key check or a log line.
  #takeAttempt(peer: string): void {
    if (this.#attempts.take(peer)) return;
    this.#refusals.refused('TOO_MANY_ATTEMPTS', { peer });
    throw new RecoveryError('TOO_MANY_ATTEMPTS', `too many failed recover attempts from this address; retry in ${this.#attempts.retryAfterSeconds(peer)} s`);
  }

  // The UUID does not change while the node waits: one cryptsetup call, not one per Recover call.
  async #diskUuid(): Promise<string> {
    this.#uuid ??= this.disk.uuid();
    try {
      return await this.#uuid;
    } catch (err) {
      this.#uuid = undefined;
      throw new RecoveryError('DISK_UNAVAILABLE', `reading the state disk UUID: ${(err as Error).message}`, { cause: err });
    }
  }

  // One key check at a time per disk; a call that finds no place gets its attempt back.
  async #checkKey(peer: string, key: Uint8Array, gone: AbortSignal): Promise<boolean> {
    try {
      return await this.#keyChecks.run(peerHost(peer), () => this.disk.testPassphrase(key), gone);
    } catch (err) {
      if (err instanceof KeyCheckRefused) {
        this.#attempts.refund(peer);
        this.#refusals.refused(err.code, { peer });
        throw new RecoveryError('KEY_CHECK_BUSY', `${err.message} (${err.code})`, { cause: err, details: { reason: err.code } });
      }
      throw new RecoveryError('DISK_UNAVAILABLE', `testing the derived key against the state disk: ${(err as Error).message}`, { cause: err });
    }
  }
}

function notWaiting(): RecoveryError {
  return new RecoveryError('NOT_WAITING', 'node is not waiting for recovery (its state disk is already unlocked)');
}

/** The cluster KMS from the request's URIs, validated before anything is derived. */
function clusterKms(req: recoverproto.RecoverMessage): ClusterKms {
  let kmsConfig: Extract<KmsConfig, { type: 'cluster-kms' }>;
  try {
    const storage = parseStorageUri(req.storageUri);
    if (storage.type !== 'no-store') throw new RecoveryError('KMS_URI_INVALID', `storage backend ${storage.type} is not supported`);
    const cfg = parseKmsUri(req.kmsUri);
    if (cfg.type !== 'cluster-kms') throw new RecoveryError('KMS_URI_INVALID', `KMS backend ${cfg.type} is not supported`);
    kmsConfig = cfg;
  } catch (err) {
    throw new RecoveryError('KMS_URI_INVALID', `creating kms client: ${(err as Error).message}`, { cause: err });
  }
  // The same lengths init accepts: a 1-byte master secret is the caller's mistake, not a disk question.
  const lengths = masterSecretLengthProblem(kmsConfig.masterSecret);
  if (lengths) throw new RecoveryError('MASTER_SECRET_INVALID', lengths);
  return new ClusterKms(kmsConfig.masterSecret);
}

