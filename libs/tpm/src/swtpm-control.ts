import { createConnection } from 'node:net';
import { TpmTransportError } from './errors.js';
import type { SocketAddress } from './transport.js';

/**
 * swtpm's control channel (`--ctrl`): big-endian `u32 command | payload`, replies of a
 * command-specific fixed length. One short-lived connection per command, because swtpm serves one
 * control connection at a time.
 */
export const SWTPM_CTRL = { GET_CAPABILITY: 1, INIT: 2, SHUTDOWN: 3, GET_TPMESTABLISHED: 4, SET_LOCALITY: 5, STOP: 0x0e } as const;

/** Sends one control command and returns the reply (exactly `replyLength` bytes). */
export async function swtpmControl(address: SocketAddress, command: number, payload: Buffer, replyLength: number, timeoutMs = 10_000): Promise<Buffer> {
  const socket = 'path' in address ? createConnection({ path: address.path }) : createConnection({ host: address.host, port: address.port });
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      let got = Buffer.alloc(0);
      const timer = setTimeout(() => reject(new TpmTransportError(`swtpm control command ${command} got no reply within ${timeoutMs} ms`)), timeoutMs);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(new TpmTransportError(`swtpm control channel: ${err.message}`, err));
      });
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= replyLength) {
          clearTimeout(timer);
          resolve(got.subarray(0, replyLength));
        }
      });
      socket.once('close', () => {
        clearTimeout(timer);
        reject(new TpmTransportError(`swtpm control channel closed after ${got.length} of ${replyLength} reply bytes`));
      });
      socket.once('connect', () => {
        const head = Buffer.alloc(4);
        head.writeUInt32BE(command);
        socket.write(Buffer.concat([head, payload]));
      });
    });
  } finally {
    socket.destroy();
  }
}

/** CMD_INIT: a power cycle. PCRs reset, keys and NV stay; TPM2_Startup is needed afterwards. */
export async function swtpmInit(address: SocketAddress, deleteVolatile = false): Promise<void> {
  const flags = Buffer.alloc(4);
  flags.writeUInt32BE(deleteVolatile ? 1 : 0);
  const res = (await swtpmControl(address, SWTPM_CTRL.INIT, flags, 4)).readUInt32BE(0);
  if (res !== 0) throw new TpmTransportError(`swtpm CMD_INIT failed with result 0x${res.toString(16)}`);
}

/** CMD_SHUTDOWN: swtpm saves its state and exits. */
export async function swtpmShutdown(address: SocketAddress): Promise<void> {
  const res = (await swtpmControl(address, SWTPM_CTRL.SHUTDOWN, Buffer.alloc(0), 4)).readUInt32BE(0);
  if (res !== 0) throw new TpmTransportError(`swtpm CMD_SHUTDOWN failed with result 0x${res.toString(16)}`);
}
