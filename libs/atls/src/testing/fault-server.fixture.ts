// Test fixture (`@asterism/atls/testing`, not part of the product API): a real TCP/TLS server that
// misbehaves on purpose in a chosen phase of an aTLS connection, for fault-injection suites.
import { once } from 'node:events';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { DummyIssuer } from '@asterism/attestation';
import { createAtlsCertificate, generateAtlsKey } from '../certificate.js';
import { atlsChannelCredentials, type AtlsChannelOptions } from '../channel-credentials.js';
import { AtlsError } from '../errors.js';

/**
 * Where the server misbehaves: on the ClientHello before any TLS answer (`accept`), inside the TLS
 * handshake (while it would build its certificate; an alert there is a real ALPN refusal), or after it.
 */
export type FaultPhase = 'accept' | 'handshake' | 'after-handshake';
/** What it does: TCP reset, orderly close, silence, or a TLS alert. */
export type FaultAction = 'reset' | 'close' | 'stall' | 'alert';

/** A fatal handshake_failure alert record (TLS 1.2 framing, what a server sends before encryption). */
const HANDSHAKE_FAILURE_ALERT = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);

/** The misbehaviour of one server. `delayMs` (after-handshake only) waits before acting. */
export interface Fault {
  readonly phase: FaultPhase;
  readonly action: FaultAction;
  readonly delayMs?: number;
}

/** A running fault server on 127.0.0.1. */
export interface FaultServer {
  readonly host: string;
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: () => number;
  close(): Promise<void>;
}

/**
 * Starts a loopback server that behaves like an aTLS server (dummy-attested certificate over the
 * client's SNI nonce, ALPN h2) up to the fault, then misbehaves. After-handshake alerts are real:
 * the server requires a client certificate, so TLS 1.3 clients receive certificate_required after
 * their Finished, exactly like a client-cert-requiring peer does.
 */
export async function startFaultServer(fault: Fault): Promise<FaultServer> {
  const held = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((raw) => {
    accepted++;
    held.add(raw);
    raw.on('error', () => undefined);
    raw.once('close', () => held.delete(raw));
    if (fault.phase === 'accept') return void raw.once('data', () => act(raw, undefined, fault.action));
    const alpnAlert = fault.phase === 'handshake' && fault.action === 'alert';
    const secure = new tls.TLSSocket(raw, {
      isServer: true,
      // No common protocol: OpenSSL answers the client's h2 with a no_application_protocol alert.
      ALPNProtocols: alpnAlert ? ['http/1.1'] : ['h2'],
      SNICallback: (name, cb) => {
        if (fault.phase === 'handshake' && !alpnAlert) return act(raw, undefined, fault.action);
        const key = generateAtlsKey();
        createAtlsCertificate({ nonce: Buffer.from(name, 'base64'), issuer: new DummyIssuer(), key }).then(
          (c) => cb(null, tls.createSecureContext({ key: key.privateKeyPem, cert: c.pem })),
          (err: Error) => cb(err),
        );
      },
      requestCert: fault.phase === 'after-handshake' && fault.action === 'alert',
      rejectUnauthorized: fault.phase === 'after-handshake' && fault.action === 'alert',
    });
    secure.on('error', () => undefined);
    secure.once('secure', () => {
      if (fault.action === 'alert') return; // OpenSSL sends certificate_required by itself
      setTimeout(() => act(raw, secure, fault.action), fault.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    accepted: () => accepted,
    close: async () => {
      for (const s of held) s.destroy();
      // Bounded: a connection the listener never saw must not keep a test waiting forever.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 2000);
        server.close(() => (clearTimeout(t), resolve()));
      });
    },
  };
}

function act(raw: net.Socket, secure: tls.TLSSocket | undefined, action: FaultAction): void {
  switch (action) {
    case 'reset':
      raw.resetAndDestroy();
      return;
    case 'close':
      if (secure) secure.end();
      else raw.end();
      return;
    case 'stall':
      return; // hold the connection, say nothing
    case 'alert':
      raw.end(HANDSHAKE_FAILURE_ALERT);
      return;
  }
}

/**
 * One connection attempt through the connector grpc-js would use, on a fresh TCP connection to
 * `port`: 'connected' (the socket is then closed) or the AtlsError the connector rejected with.
 */
export async function connectOnce(port: number, options: AtlsChannelOptions): Promise<AtlsError | 'connected'> {
  const connector = atlsChannelCredentials(options)._createSecureConnector(undefined, {}, undefined);
  const raw = net.connect(port, '127.0.0.1');
  await once(raw, 'connect');
  try {
    const res = await connector.connect(raw);
    res.socket.destroy();
    return 'connected';
  } catch (err) {
    if (err instanceof AtlsError) return err;
    throw new Error(`connector rejected with an untyped error: ${String(err)}`, { cause: err });
  }
}
