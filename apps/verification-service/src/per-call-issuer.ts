import type { Issuer, Variant } from '@asterism/attestation';

/** An issuer together with what releases its TPM connection. */
export interface OpenedIssuer {
  issuer: Issuer;
  close(): Promise<void>;
}

/**
 * Issues every document over a TPM connection of its own, closed right after, one document at a
 * time. A node's bootstrapper that keeps serving the verification service after bootstrapping
 * (docs/protocol/verification.md) must not hold the TPM: swtpm serves a single connection, and
 * the node's other TPM users (a measured-boot agent, an operator's tools) need it too.
 */
export class PerCallIssuer implements Issuer {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly variant: Variant,
    private readonly open: () => OpenedIssuer,
  ) {}

  issue(userData: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    const run = async () => {
      const opened = this.open();
      try {
        return await opened.issuer.issue(userData, nonce, signal);
      } finally {
        await opened.close();
      }
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }
}
