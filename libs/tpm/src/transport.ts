import { open, type FileHandle } from 'node:fs/promises';
import { createConnection, type Socket } from 'node:net';
import { MAX_RESPONSE_SIZE } from './constants.js';
import { TpmTransportError } from './errors.js';

/**
 * Sends one marshalled TPM command and returns the whole response (header included). Every
 * implementation serialises calls: a TPM (and swtpm's single connection) handles one command at a time.
 */
export interface TpmTransport {
  transmit(command: Uint8Array): Promise<Buffer>;
  close(): Promise<void>;
}

/** Runs async jobs one after another (a FIFO mutex). */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(job, job);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}

/** Where a swtpm (or any raw TPM command stream) listens. */
export type SocketAddress = { readonly path: string } | { readonly host: string; readonly port: number };

/**
 * The swtpm data socket (TCP or Unix): the raw TPM 2.0 command stream, no framing. swtpm serves one
 * connection at a time, so share one SocketTransport per swtpm; calls are queued.
 */
export class SocketTransport implements TpmTransport {
  readonly #queue = new SerialQueue();
  #pending: Buffer = Buffer.alloc(0);
  #wake: (() => void) | undefined;
  #closed = false;
  #error: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    socket.setNoDelay?.(true);
    socket.on('data', (d: Buffer) => {
      this.#pending = this.#pending.length ? Buffer.concat([this.#pending, d]) : d;
      this.#wake?.();
    });
    socket.on('error', (err) => {
      this.#error = err;
      this.#wake?.();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  /** Connects to a swtpm data socket. */
  static async connect(address: SocketAddress, options: { timeoutMs?: number } = {}): Promise<SocketTransport> {
    const socket = 'path' in address ? createConnection({ path: address.path }) : createConnection({ host: address.host, port: address.port });
    const where = 'path' in address ? address.path : `${address.host}:${address.port}`;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(new TpmTransportError(`connecting to TPM socket ${where}: ${err.message}`, err));
      socket.once('error', onError);
      socket.once('connect', () => {
        socket.off('error', onError);
        resolve();
      });
    });
    return new SocketTransport(socket, options.timeoutMs ?? 30_000);
  }

  async #readExact(n: number, deadline: number): Promise<Buffer> {
    while (this.#pending.length < n) {
      if (this.#error) throw new TpmTransportError(`TPM socket error: ${this.#error.message}`, this.#error);
      if (this.#closed) throw new TpmTransportError(`TPM socket closed with ${this.#pending.length} of ${n} response bytes received`);
      const left = deadline - Date.now();
      if (left <= 0) throw new TpmTransportError(`TPM did not answer within ${this.timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(t);
          this.#wake = undefined;
          resolve();
        };
      });
    }
    const out = this.#pending.subarray(0, n);
    this.#pending = this.#pending.subarray(n);
    return out;
  }

  transmit(command: Uint8Array): Promise<Buffer> {
    return this.#queue.run(async () => {
      if (this.#closed || this.#error) throw new TpmTransportError('TPM socket is closed');
      this.#pending = Buffer.alloc(0);
      this.socket.write(command);
      const deadline = Date.now() + this.timeoutMs;
      try {
        const header = await this.#readExact(10, deadline);
        const size = header.readUInt32BE(2);
        if (size < 10 || size > MAX_RESPONSE_SIZE) throw new TpmTransportError(`TPM response size ${size} out of range [10, ${MAX_RESPONSE_SIZE}]`);
        return Buffer.concat([header, await this.#readExact(size - 10, deadline)]);
      } catch (err) {
        // The stream is out of sync after a partial response: never reuse it.
        this.socket.destroy();
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    if (this.socket.destroyed) return;
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1000).unref();
    });
  }
}

/**
 * The kernel TPM device (`/dev/tpmrm0`, the in-kernel resource manager): write one command, read
 * one response. Not available in this repository's sandbox (no CONFIG_TCG_TPM); the command bytes
 * are identical to the socket path.
 */
export class DeviceTransport implements TpmTransport {
  readonly #queue = new SerialQueue();

  private constructor(private readonly file: FileHandle, readonly path: string) {}

  /** Opens the TPM device (default `/dev/tpmrm0`). */
  static async open(path = '/dev/tpmrm0'): Promise<DeviceTransport> {
    try {
      return new DeviceTransport(await open(path, 'r+'), path);
    } catch (err) {
      throw new TpmTransportError(`opening TPM device ${path}: ${(err as Error).message}`, err);
    }
  }

  transmit(command: Uint8Array): Promise<Buffer> {
    return this.#queue.run(async () => {
      try {
        await this.file.write(command);
        const buf = Buffer.alloc(MAX_RESPONSE_SIZE);
        const { bytesRead } = await this.file.read(buf, 0, buf.length, null);
        return buf.subarray(0, bytesRead);
      } catch (err) {
        throw new TpmTransportError(`TPM device ${this.path}: ${(err as Error).message}`, err);
      }
    });
  }

  async close(): Promise<void> {
    await this.file.close();
  }
}
