import type { Validator } from '@asterism/attestation';
import { atlsChannelCredentials, type AtlsError, ATLS_CLIENT_CHANNEL_OPTIONS } from '@asterism/atls';
import { recoverproto } from '@asterism/proto';
import { RecordingValidator } from '../verify/recording-validator.js';
import type { RecoverConnector } from './recover-command.js';

/**
 * recoverproto.API/Recover over aTLS: the CLI validates the node's attestation document with the
 * variant's validator before sending the master secret. A new client (and nonce) per attempt.
 */
export class GrpcRecoverConnector implements RecoverConnector {
  readonly #failures = new Map<string, Error>();

  constructor(private readonly validator: Validator) {}

  async recover(endpoint: string, req: recoverproto.RecoverMessage, signal: AbortSignal): Promise<void> {
    const recorder = new RecordingValidator(this.validator);
    // A verdict about the node's certificate (no document of the expected variant, a bad
    // signature...) is as final as a refused document: it must not be retried as "unreachable".
    let verdict: AtlsError | undefined;
    const onConnectionError = (err: AtlsError) => {
      if (!err.retryable) verdict = err;
    };
    const client = new recoverproto.APIClient(endpoint, atlsChannelCredentials({ validators: [recorder], onConnectionError }), ATLS_CLIENT_CHANNEL_OPTIONS);
    try {
      await new Promise<void>((resolve, reject) => {
        const call = client.recover(req, (err) => (err ? reject(err) : resolve()));
        signal.addEventListener('abort', () => call.cancel(), { once: true });
      });
    } finally {
      client.close();
      if (recorder.outcome && !recorder.outcome.ok) this.#failures.set(endpoint, recorder.outcome.error);
      else if (verdict) this.#failures.set(endpoint, verdict);
      else this.#failures.delete(endpoint);
    }
  }

  attestationError(endpoint: string): Error | undefined {
    return this.#failures.get(endpoint);
  }
}
