import { readFile } from 'node:fs/promises';
import type { Validator, Variant } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';

/** Builds a validator from the attestation config file's contents (variant-specific decoding). */
export type ValidatorFactory = (configJson: string) => Promise<Validator> | Validator;

/**
 * The joinservice's validator, rebuilt whenever the attestation config file changes (docs/protocol/join-ticket.md). Unlike the reference, validations do not share a mutex with each other or with
 * reloads: each validation takes the validator current at its start, and a reload swaps the
 * reference atomically, so in-flight joins finish with the config they started with.
 */
export class UpdatableValidator implements Validator {
  #current: Validator;
  #generation = 1;

  private constructor(
    private readonly path: string,
    private readonly factory: ValidatorFactory,
    private readonly logger: Logger,
    initial: Validator,
  ) {
    this.#current = initial;
  }

  /** Reads and decodes the file once; a broken initial config is fatal for the caller. */
  static async create(path: string, factory: ValidatorFactory, logger: Logger): Promise<UpdatableValidator> {
    const text = await readFile(path, 'utf8');
    return new UpdatableValidator(path, factory, logger, await factory(text));
  }

  get variant(): Variant {
    return this.#current.variant;
  }

  /** How many configs have been loaded (1 = the initial one). */
  get generation(): number {
    return this.#generation;
  }

  validate(document: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#current.validate(document, nonce, signal);
  }

  /**
   * Re-reads the file and swaps the validator. A missing or broken file keeps the previous
   * validator (logged); returns whether a new validator is in place.
   */
  async reload(): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      this.logger.warn('attestation config unreadable, keeping the previous validator', { path: this.path, errno: (err as NodeJS.ErrnoException).code });
      return false;
    }
    try {
      const next = await this.factory(text);
      this.#current = next;
      this.#generation++;
      this.logger.info('attestation config reloaded', { path: this.path, variant: next.variant.name, generation: this.#generation });
      return true;
    } catch (err) {
      this.logger.error('attestation config invalid, keeping the previous validator', { path: this.path, err });
      return false;
    }
  }
}
