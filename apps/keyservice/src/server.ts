import * as grpc from '@grpc/grpc-js';
import { dataKeyInfo, HKDF_MAX_LENGTH } from '@asterism/crypto';
import { readJoinId, type Logger } from '@asterism/logger';
import { AsterismError } from '@asterism/errors';
import type { kms } from '@asterism/proto';
import { toStatus } from '@asterism/service-runtime';
import { invalidUtf8Field } from './utf8-guard.js';

/** What the server needs to derive keys (ClusterKms implements it). */
export interface DataKeyDeriver {
  getDek(id: string, length: number): Buffer;
}

/** Why a data key request was refused; the message is safe to send to the caller. */
export class KeyRequestError extends AsterismError<'INVALID_REQUEST'> {}

/** The keyservice's answer table: a client's mistake is INVALID_ARGUMENT, anything else INTERNAL. */
const STATUS_OF: Record<KeyRequestError['code'], grpc.status> = { INVALID_REQUEST: grpc.status.INVALID_ARGUMENT };

/** Longest accepted data key id, in bytes. Disk UUIDs are 36; this leaves ample room. */
export const MAX_DATA_KEY_ID_BYTES = 256;

/** Checks a request before any key material is touched; throws KeyRequestError. */
export function validateRequest(req: kms.GetDataKeyRequest): void {
  const invalid = (message: string) => new KeyRequestError('INVALID_REQUEST', message);
  // Same order and texts as the reference for the first two checks.
  if (req.length === 0) throw invalid("can't derive key with length zero");
  if (req.dataKeyId === '') throw invalid('no data key ID specified');
  // Protobuf strings are UTF-8; the decoder would map every bad byte to U+FFFD (one key for many ids).
  if (invalidUtf8Field(req) !== undefined) throw invalid('data key ID is not valid UTF-8');
  if (req.length > HKDF_MAX_LENGTH) {
    throw invalid(`key length ${req.length} exceeds the maximum of ${HKDF_MAX_LENGTH} bytes`);
  }
  const idBytes = Buffer.byteLength(req.dataKeyId, 'utf8');
  if (idBytes > MAX_DATA_KEY_ID_BYTES) {
    throw invalid(`data key ID is ${idBytes} bytes, the maximum is ${MAX_DATA_KEY_ID_BYTES}`);
  }
}

/** kms.API implementation: GetDataKey = HKDF(master, salt, "key-" + id, length). */
export class KeyServiceServer {
  constructor(
    private readonly deriver: DataKeyDeriver,
    private readonly logger: Logger,
  ) {}

  /** The handler map for `server.addService(kms.APIService, ...)`. */
  handlers(): kms.APIServer {
    return {
      getDataKey: (call, callback) => {
        try {
          validateRequest(call.request);
          const dataKey = this.deriver.getDek(dataKeyInfo(call.request.dataKeyId), call.request.length);
          this.logDerived(call);
          callback(null, { dataKey });
        } catch (err) {
          const joinId = readJoinId(call.metadata);
          const status = toStatus(err, STATUS_OF, { ref: joinId });
          if (status.internal) this.logger.error('deriving data key failed', { joinId, err, dataKeyId: call.request.dataKeyId });
          callback(status);
        }
      },
    };
  }

  /**
   * A derivation for a join (the caller sent its join id: a handful per attested join) is logged
   * at info, so a join can be followed into the keyservice at the default level; anonymous calls
   * (load, other clients) only at debug, guarded: a log entry costs more than the derivation
   * (docs/adr/0021).
   */
  private logDerived(call: { metadata: grpc.Metadata; request: kms.GetDataKeyRequest }): void {
    const joinId = readJoinId(call.metadata);
    const fields = { dataKeyId: call.request.dataKeyId, length: call.request.length };
    if (joinId) this.logger.info('derived data key', { joinId, ...fields });
    else if (this.logger.isDebugEnabled()) this.logger.debug('derived data key', fields);
  }
}
