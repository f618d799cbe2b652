import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a route handler answers. */
export interface FakeResponse {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** A request as the fake saw it (for assertions on headers and order). */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

/** An HTTP server on 127.0.0.1 (random port) answering with `handle`; records every request. */
export class LoopbackServer {
  readonly seen: SeenRequest[] = [];
  /** The next `failNext` requests get HTTP 503 (retry tests). */
  failNext = 0;
  private server: Server | undefined;
  url = '';

  constructor(private readonly handle: (req: SeenRequest) => FakeResponse) {}

  /** Starts listening; resolves with the base URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const seen = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
      this.seen.push(seen);
      req.resume();
      req.on('end', () => {
        if (this.failNext > 0) {
          this.failNext--;
          res.writeHead(503).end('busy');
          return;
        }
        const r = this.handle(seen);
        res.writeHead(r.status, r.headers ?? {}).end(r.body ?? '');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A loopback port nobody listens on (bound, then released), for "endpoint absent" tests. */
export async function closedLoopbackPort(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** JSON response helper. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): FakeResponse {
  return { status, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
}
