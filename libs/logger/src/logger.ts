import winston from 'winston';
import { redactValue, SecretRegistry } from './redaction.js';

/** Levels, most severe first (Go slog-like: debug < info < warn < error). */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** The logger every Asterism module receives through its constructor. */
export type Logger = winston.Logger;

/** Options for createLogger. */
export interface LoggerOptions {
  /** Value of the `component` field on every line (e.g. `keyservice`). */
  component: string;
  level?: LogLevel;
  /** Secrets whose encodings are scrubbed from every line. */
  secrets?: SecretRegistry;
  /** Where lines go; defaults to stderr (stdout stays free for program output). */
  stream?: NodeJS.WritableStream;
  /** Extra fields on every line. */
  defaultMeta?: Record<string, unknown>;
}

/**
 * Maps the reference's `-v` verbosity to a level: <= -1 debug, 0 info, 1 warn, >= 2 error.
 */
export function levelFromVerbosity(v: number): LogLevel {
  if (v <= -1) return 'debug';
  if (v === 0) return 'info';
  if (v === 1) return 'warn';
  return 'error';
}

/** winston format: redacts secrets and renames `message` to the stable field name `msg`. */
const shape = winston.format((info, opts: unknown) => {
  const secrets = (opts as { secrets?: SecretRegistry } | undefined)?.secrets;
  const { level, message, ...rest } = info as Record<string | symbol, unknown> & { level: string; message: unknown };
  const meta = redactValue(rest, secrets) as Record<string, unknown>;
  const msg = redactValue(typeof message === 'string' ? message : JSON.stringify(message ?? ''), secrets);
  const out = Object.assign(info, { msg, ...meta }) as winston.Logform.TransformableInfo;
  delete (out as Record<string, unknown>).message;
  // Keep symbol keys (winston's internal level/splat) but overwrite the visible ones.
  out.level = level;
  return out;
});

/**
 * Creates a JSON line logger: `{"level","time","component","msg",...fields}` with secret redaction.
 * Lines go to stderr by default, like the reference's slog handlers.
 */
export function createLogger(options: LoggerOptions): Logger {
  const stream = options.stream ?? process.stderr;
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: { component: options.component, ...(options.defaultMeta ?? {}) },
    format: winston.format.combine(
      winston.format.timestamp({ alias: 'time' }),
      shape({ secrets: options.secrets }),
      winston.format((info) => {
        delete (info as Record<string, unknown>).timestamp;
        return info;
      })(),
      winston.format.json(),
    ),
    transports: [new winston.transports.Stream({ stream })],
  });
}

/** A logger that drops everything (tests, optional collaborators). */
export function createNopLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console({ silent: true })] });
}
