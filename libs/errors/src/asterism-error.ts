/**
 * Base class of every domain error in Asterism. A library declares its own subclass with a
 * string-literal union of codes; apps translate codes to gRPC statuses at their boundary.
 * `details` carries structured, non-secret facts (which PCR, expected vs actual, which check).
 */
export class AsterismError<Code extends string = string> extends Error {
  /** Stable, machine-readable reason, e.g. `MEASUREMENT_MISMATCH`. */
  readonly code: Code;
  /** Structured facts about the failure; never secrets. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: Code, message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = Object.freeze({ ...(options.details ?? {}) });
  }

  /** A JSON-friendly view for logs: name, code, message, details and the cause chain's messages. */
  toJSON(): Record<string, unknown> {
    const causes: string[] = [];
    let c: unknown = this.cause;
    while (c instanceof Error && causes.length < 8) {
      causes.push(c.message);
      c = c.cause;
    }
    return { name: this.name, code: this.code, message: this.message, details: this.details, ...(causes.length ? { causes } : {}) };
  }
}

/** True when `err` is an AsterismError (optionally with one of the given codes). */
export function isAsterismError<C extends string>(err: unknown, ...codes: C[]): err is AsterismError<C> {
  return err instanceof AsterismError && (codes.length === 0 || codes.includes(err.code as C));
}

/** Lower-case context wrapping in the style "getting measurement secret: <cause>". */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
