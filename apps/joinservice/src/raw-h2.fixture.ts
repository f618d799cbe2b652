/**
 * Test-only raw HTTP/2 client (stream-flood.int.spec.ts): writes HEADERS frames itself, so it can
 * ignore the server's SETTINGS_MAX_CONCURRENT_STREAMS as an attacker would (Node's own client
 * queues streams beyond it), and records per stream how the server ended it.
 */
import type { Socket } from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, CONTINUATION: 9 } as const;
const FLAG = { END_STREAM: 1, ACK: 1, END_HEADERS: 4 } as const;
const MAX_FRAME = 16_384;

/** How the server ended one stream: answered (HEADERS), reset (RST_STREAM code), or cut off by GOAWAY. */
export interface StreamOutcome {
  answered: boolean;
  rstCode?: number;
}

/** HPACK integer with an n-bit prefix (RFC 7541 5.1). */
function hpackInt(value: number, prefixBits: number, first: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([first | value]);
  const out = [first | max];
  let v = value - max;
  while (v >= 128) {
    out.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

/** A header block of "literal without indexing, new name" fields (no Huffman, no table). */
export function headerBlock(headers: ReadonlyArray<readonly [string, string]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of headers) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(Buffer.from([0]), hpackInt(n.length, 7, 0), n, hpackInt(v.length, 7, 0), v);
  }
  return Buffer.concat(parts);
}

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** A raw HTTP/2 client session on an established (TLS) socket. */
export class RawH2Session {
  readonly outcomes = new Map<number, StreamOutcome>();
  /** SETTINGS_MAX_CONCURRENT_STREAMS the server announced. */
  maxConcurrentStreams: number | undefined;
  goaway: { lastStreamId: number; code: number } | undefined;
  closed = false;
  #next = 1;
  #pending = Buffer.alloc(0);
  readonly #closed: Promise<void>;

  constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => this.#read(d));
    socket.on('error', () => undefined);
    this.#closed = new Promise((resolve) => socket.once('close', () => resolve()));
    void this.#closed.then(() => (this.closed = true));
    socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  }

  /** Opens one stream: HEADERS (split into CONTINUATION frames when large), then `body` as DATA with END_STREAM, or nothing (half-open). */
  open(block: Buffer, body?: Buffer): number {
    const id = this.#next;
    this.#next += 2;
    this.outcomes.set(id, { answered: false });
    const frames: Buffer[] = [];
    for (let at = 0; at < block.length || at === 0; at += MAX_FRAME) {
      const last = at + MAX_FRAME >= block.length;
      frames.push(frame(at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION, last ? FLAG.END_HEADERS : 0, id, block.subarray(at, at + MAX_FRAME)));
    }
    if (body) frames.push(frame(FRAME.DATA, FLAG.END_STREAM, id, body));
    this.socket.write(Buffer.concat(frames));
    return id;
  }

  /** Opens `count` half-open streams with one write; returns their ids. */
  openHalfOpen(block: Buffer, count: number): number[] {
    const frames: Buffer[] = [];
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const id = this.#next;
      this.#next += 2;
      this.outcomes.set(id, { answered: false });
      ids.push(id);
      frames.push(frame(FRAME.HEADERS, FLAG.END_HEADERS, id, block));
    }
    this.socket.write(Buffer.concat(frames));
    return ids;
  }

  /** Waits until the socket's write buffer drained or the socket closed (back pressure for large bursts). */
  async drain(): Promise<void> {
    if (this.socket.writableNeedDrain && !this.closed) await Promise.race([new Promise((r) => this.socket.once('drain', r)), this.#closed]);
  }

  close(): Promise<void> {
    this.socket.destroy();
    return this.#closed;
  }

  #read(data: Buffer): void {
    this.#pending = Buffer.concat([this.#pending, data]);
    while (this.#pending.length >= 9) {
      const length = this.#pending.readUIntBE(0, 3);
      if (this.#pending.length < 9 + length) return;
      const type = this.#pending[3]!;
      const flags = this.#pending[4]!;
      const stream = this.#pending.readUInt32BE(5) & 0x7fffffff;
      const payload = this.#pending.subarray(9, 9 + length);
      this.#pending = this.#pending.subarray(9 + length);
      this.#frame(type, flags, stream, payload);
    }
  }

  #frame(type: number, flags: number, stream: number, payload: Buffer): void {
    const outcome = this.outcomes.get(stream);
    if (type === FRAME.SETTINGS && !(flags & FLAG.ACK)) {
      for (let at = 0; at + 6 <= payload.length; at += 6) if (payload.readUInt16BE(at) === 3) this.maxConcurrentStreams = payload.readUInt32BE(at + 2);
      this.socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
    } else if (type === FRAME.PING && !(flags & FLAG.ACK)) {
      this.socket.write(frame(FRAME.PING, FLAG.ACK, 0, payload));
    } else if (type === FRAME.HEADERS && outcome) {
      outcome.answered = true;
    } else if (type === FRAME.RST_STREAM && outcome) {
      outcome.rstCode = payload.readUInt32BE(0);
    } else if (type === FRAME.GOAWAY) {
      this.goaway = { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, code: payload.readUInt32BE(4) };
    }
  }
}
