import * as grpc from '@grpc/grpc-js';
import { ClusterKms, dataKeyInfo, MEASUREMENT_SECRET_KEY_ID, parseKmsUri, parseStorageUri, stateDiskKeyId, STATE_DISK_KEY_LENGTH, DERIVED_KEY_LENGTH_DEFAULT } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import { recoverproto } from '@asterism/proto';
import { GrpcServer, toStatus } from '@asterism/service-runtime';

/** The port the reference's recovery server listens on (docs/protocol/recovery.md). */
export const RECOVERY_PORT = 9999;

/** Why a Recover call was refused; each maps to one gRPC status at the boundary (toStatus, docs/adr/0027). */
export type RecoveryErrorCode = 'NOT_WAITING' | 'KMS_URI_INVALID' | 'KEY_DOES_NOT_OPEN_DISK' | 'DISK_UNAVAILABLE';

/** A refused Recover call (never carries key material). */
export class RecoveryError extends AsterismError<RecoveryErrorCode> {}

const STATUS: Record<RecoveryErrorCode, grpc.status> = {
  NOT_WAITING: grpc.status.FAILED_PRECONDITION,
  KMS_URI_INVALID: grpc.status.INVALID_ARGUMENT,
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

/**
 * recoverproto.API on a rebooted node whose state disk is still locked (docs/protocol/recovery.md).
 * A Recover call carries the cluster KMS URI; the node derives its measurement secret and its
 * state disk key, and only accepts them when the key opens the disk's LUKS header (a wrong
 * master secret is refused and changes nothing). The first accepted call resolves {@link keys}.
 */
export class RecoveryServer {
  readonly server: grpc.Server;
  readonly #shape: GrpcServer;
  #waiting = true;
  #resolve!: (k: RecoveredKeys | 'stopped') => void;
  readonly #keys = new Promise<RecoveredKeys | 'stopped'>((resolve) => (this.#resolve = resolve));

  constructor(
    private readonly disk: RecoveryDisk,
    private readonly logger: Logger,
  ) {
    // The one server shape (docs/adr/0027); no health service (the reference's recovery server has
    // none). Call lines at debug: the handler logs each request and refusal itself.
    this.#shape = new GrpcServer({ logger, okCallLogLevel: 'debug', failedCallLogLevel: 'debug' });
    this.server = this.#shape.server;
    this.server.addService(recoverproto.APIService, {
      recover: (call: grpc.ServerUnaryCall<recoverproto.RecoverMessage, recoverproto.RecoverResponse>, done: grpc.sendUnaryData<recoverproto.RecoverResponse>) => {
        this.recover(call.request, call.getPeer()).then(
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

  private async recover(req: recoverproto.RecoverMessage, peer: string): Promise<void> {
    if (!this.#waiting) throw notWaiting();
    this.logger.info('recovery request received', { peer });
    const kms = clusterKms(req);
    let uuid: string;
    try {
      uuid = await this.disk.uuid();
    } catch (err) {
      throw new RecoveryError('DISK_UNAVAILABLE', `reading the state disk UUID: ${(err as Error).message}`, { cause: err });
    }
    const stateDiskKey = kms.getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH);
    let opens: boolean;
    try {
      opens = await this.disk.testPassphrase(stateDiskKey);
    } catch (err) {
      throw new RecoveryError('DISK_UNAVAILABLE', `testing the derived key against the state disk: ${(err as Error).message}`, { cause: err });
    }
    if (!opens) {
      this.logger.warn('recovery refused: the derived key does not open the state disk', { peer });
      throw new RecoveryError('KEY_DOES_NOT_OPEN_DISK', "the key derived from this master secret does not open the node's state disk (wrong master secret or salt?); nothing was changed", { details: { diskUuid: uuid } });
    }
    if (!this.#waiting) throw notWaiting();
    this.#waiting = false;
    const measurementSecret = kms.getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), DERIVED_KEY_LENGTH_DEFAULT);
    this.logger.info('recovery accepted: the derived key opens the state disk', { peer, diskUuid: uuid });
    this.#resolve({ stateDiskKey, measurementSecret });
  }
}

function notWaiting(): RecoveryError {
  return new RecoveryError('NOT_WAITING', 'node is not waiting for recovery (its state disk is already unlocked)');
}

/** The cluster KMS from the request's URIs, validated before anything is derived. */
function clusterKms(req: recoverproto.RecoverMessage): ClusterKms {
  try {
    const storage = parseStorageUri(req.storageUri);
    if (storage.type !== 'no-store') throw new RecoveryError('KMS_URI_INVALID', `storage backend ${storage.type} is not supported`);
    const cfg = parseKmsUri(req.kmsUri);
    if (cfg.type !== 'cluster-kms') throw new RecoveryError('KMS_URI_INVALID', `KMS backend ${cfg.type} is not supported`);
    return new ClusterKms(cfg.masterSecret);
  } catch (err) {
    throw new RecoveryError('KMS_URI_INVALID', `creating kms client: ${(err as Error).message}`, { cause: err });
  }
}

