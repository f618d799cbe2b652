/**
 * The emergency-SSH pieces (docs/protocol/key-hierarchy.md): the ed25519 CA from a seed, SSH wire-format public keys,
 * authorized_keys lines, OpenSSH host certificates (PROTOCOL.certkeys) and unencrypted OpenSSH
 * ed25519 private keys (the node's host key file). Parsing is bounds-checked: bad input throws
 * SshError, never a RangeError.
 */
import { createPrivateKey, createPublicKey, randomBytes, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { AsterismError } from '@asterism/errors';

/** Why SSH data was refused. */
export class SshError extends AsterismError<'SSH_KEY_INVALID' | 'SSH_SEED_TOO_SHORT' | 'SSH_PRIVATE_KEY_INVALID' | 'SSH_CERT_INVALID'> {}

const ED25519 = 'ssh-ed25519';
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SUPPORTED_KEYS = new Set([ED25519, 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa']);
export const SSH_CERT_TYPE_HOST = 2;

/** SSH `string`: u32 length + bytes. */
export function sshString(data: Uint8Array | string): Buffer {
  const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function u64(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
}

/** A bounds-checked reader over SSH wire data. */
class SshReader {
  #off = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
    private readonly code: SshError['code'] = 'SSH_KEY_INVALID',
  ) {}
  private need(n: number): void {
    if (n < 0 || this.#off + n > this.buf.length) throw new SshError(this.code, `${this.what}: truncated (need ${n} bytes at offset ${this.#off} of ${this.buf.length})`);
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.#off);
    this.#off += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.buf.readBigUInt64BE(this.#off);
    this.#off += 8;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const v = this.buf.subarray(this.#off, this.#off + n);
    this.#off += n;
    return v;
  }
  string(): Buffer {
    return this.bytes(this.u32());
  }
  text(): string {
    return this.string().toString('utf8');
  }
  get offset(): number {
    return this.#off;
  }
  get done(): boolean {
    return this.#off === this.buf.length;
  }
  end(): void {
    if (!this.done) throw new SshError(this.code, `${this.what}: ${this.buf.length - this.#off} trailing bytes`);
  }
}

/** A parsed SSH public key. */
export interface SshPublicKey {
  type: string;
  /** The full wire encoding. */
  wire: Buffer;
  /** The key's fields after the type string, as they appear inside a certificate. */
  body: Buffer;
}

/** Parses and checks an SSH wire-format public key (ssh-ed25519, ecdsa-sha2-nistp*, ssh-rsa). */
export function parseSshPublicKey(wire: Uint8Array): SshPublicKey {
  const buf = Buffer.from(wire);
  if (buf.length === 0) throw new SshError('SSH_KEY_INVALID', 'SSH public key is empty');
  const r = new SshReader(buf, 'SSH public key');
  const type = r.text();
  if (!SUPPORTED_KEYS.has(type)) throw new SshError('SSH_KEY_INVALID', `unsupported SSH key type ${JSON.stringify(type.slice(0, 64))}`);
  const bodyStart = r.offset;
  if (type === ED25519) {
    const pk = r.string();
    if (pk.length !== 32) throw new SshError('SSH_KEY_INVALID', `ssh-ed25519 key of ${pk.length} bytes, want 32`);
  } else if (type.startsWith('ecdsa-sha2-')) {
    const curve = r.text();
    if (curve !== type.slice('ecdsa-sha2-'.length)) throw new SshError('SSH_KEY_INVALID', `ECDSA key type ${type} with curve ${curve}`);
    const q = r.string();
    if (q.length === 0 || q[0] !== 0x04) throw new SshError('SSH_KEY_INVALID', 'ECDSA point is not uncompressed');
  } else {
    const e = r.string();
    const n = r.string();
    if (e.length === 0 || n.length < 128) throw new SshError('SSH_KEY_INVALID', 'RSA key too small or malformed');
  }
  r.end();
  return { type, wire: buf, body: buf.subarray(bodyStart) };
}

/** `<type> <base64>\n`, the authorized_keys form. */
export function authorizedKeyLine(wire: Uint8Array): string {
  const type = new SshReader(Buffer.from(wire), 'SSH key').text();
  return `${type} ${Buffer.from(wire).toString('base64')}\n`;
}

/** Parses an authorized_keys line back into wire format. */
export function parseAuthorizedKeyLine(line: string): Buffer {
  const [type, b64] = line.trim().split(/\s+/);
  if (!type || !b64) throw new SshError('SSH_KEY_INVALID', 'authorized_keys line needs a type and base64 data');
  const wire = Buffer.from(b64, 'base64');
  const inner = new SshReader(wire, 'authorized_keys line').text();
  if (inner !== type) throw new SshError('SSH_KEY_INVALID', `authorized_keys line says ${type} but the key is ${inner}`);
  return wire;
}

/** An ed25519 signing key with its SSH public key. */
export interface SshSigner {
  privateKey: KeyObject;
  publicWire: Buffer;
}

function ed25519FromSeed(seed: Buffer): SshSigner {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicWire: Buffer.concat([sshString(ED25519), sshString(raw)]) };
}

/**
 * The emergency SSH CA: an ed25519 key whose seed is the first 32 bytes of `seed` (Go's
 * `ed25519.GenerateKey(reader)`); shorter input fails.
 */
export function sshCaFromSeed(seed: Uint8Array): SshSigner {
  if (!seed || seed.length < 32) throw new SshError('SSH_SEED_TOO_SHORT', `SSH CA seed of ${seed?.length ?? 0} bytes, need 32`);
  return ed25519FromSeed(Buffer.from(seed).subarray(0, 32));
}

/** Options of a host certificate. */
export interface HostCertificateOptions {
  ca: SshSigner;
  /** The host key in SSH wire format, or already parsed by {@link parseSshPublicKey}. */
  hostKeyWire: Uint8Array | SshPublicKey;
  principals: string[];
  /** Unix seconds; default now. */
  validAfter?: bigint;
  nonce?: Buffer;
}

/**
 * An OpenSSH host certificate (type 2) for `hostKeyWire`, exactly as docs/protocol/key-hierarchy.md: serial 0, key
 * id = first principal, valid from now until forever, no options or extensions, random nonce,
 * signed by the ed25519 CA. Returns the certificate's wire encoding.
 */
export function signHostCertificate(o: HostCertificateOptions): Buffer {
  if (o.principals.length === 0) throw new SshError('SSH_CERT_INVALID', 'a host certificate needs at least one principal');
  const host = o.hostKeyWire instanceof Uint8Array ? parseSshPublicKey(o.hostKeyWire) : o.hostKeyWire;
  const toSign = Buffer.concat([
    sshString(`${host.type}-cert-v01@openssh.com`),
    sshString(o.nonce ?? randomBytes(32)),
    host.body,
    u64(0n),
    u32(SSH_CERT_TYPE_HOST),
    sshString(o.principals[0]!),
    sshString(Buffer.concat(o.principals.map((p) => sshString(p)))),
    u64(o.validAfter ?? BigInt(Math.floor(Date.now() / 1000))),
    u64(0xffffffffffffffffn),
    sshString(Buffer.alloc(0)),
    sshString(Buffer.alloc(0)),
    sshString(Buffer.alloc(0)),
    sshString(o.ca.publicWire),
  ]);
  const signature = cryptoSign(null, toSign, o.ca.privateKey);
  return Buffer.concat([toSign, sshString(Buffer.concat([sshString(ED25519), sshString(signature)]))]);
}

/** The fields of a parsed certificate. */
export interface SshCertificate {
  certType: string;
  serial: bigint;
  type: number;
  keyId: string;
  principals: string[];
  validAfter: bigint;
  validBefore: bigint;
  caKeyWire: Buffer;
  /** Whether the ed25519 CA signature verifies. */
  signatureValid: boolean;
}

/** Parses an OpenSSH certificate with an ed25519 CA and checks its signature. */
export function parseSshCertificate(wire: Uint8Array): SshCertificate {
  const buf = Buffer.from(wire);
  const r = new SshReader(buf, 'SSH certificate', 'SSH_CERT_INVALID');
  const certType = r.text();
  const keyType = certType.replace(/-cert-v01@openssh\.com$/, '');
  if (keyType === certType || !SUPPORTED_KEYS.has(keyType)) throw new SshError('SSH_CERT_INVALID', `unsupported certificate type ${JSON.stringify(certType.slice(0, 64))}`);
  r.string(); // nonce
  // The certified key: one field for ed25519, two for ECDSA (curve, point) and RSA (e, n).
  const keyFields = keyType === ED25519 ? 1 : 2;
  for (let i = 0; i < keyFields; i++) r.string();
  const serial = r.u64();
  const type = r.u32();
  const keyId = r.text();
  const pr = new SshReader(r.string(), 'certificate principals', 'SSH_CERT_INVALID');
  const principals: string[] = [];
  while (!pr.done) principals.push(pr.text());
  const validAfter = r.u64();
  const validBefore = r.u64();
  r.string();
  r.string();
  r.string();
  const caKeyWire = r.string();
  const signedLength = r.offset;
  const sig = new SshReader(r.string(), 'certificate signature', 'SSH_CERT_INVALID');
  r.end();
  const sigType = sig.text();
  const sigBytes = sig.string();
  let signatureValid = false;
  const ca = parseSshPublicKey(caKeyWire);
  if (sigType === ED25519 && ca.type === ED25519) {
    const raw = new SshReader(ca.body, 'CA key').string();
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]);
    signatureValid = cryptoVerify(null, buf.subarray(0, signedLength), createPublicKey({ key: spki, format: 'der', type: 'spki' }), sigBytes);
  }
  return { certType, serial, type, keyId, principals, validAfter, validBefore, caKeyWire, signatureValid };
}

/**
 * Reads an unencrypted OpenSSH ed25519 private key file (`openssh-key-v1`, as ssh-keygen writes
 * `ssh_host_ed25519_key`) and returns the signer.
 */
export function parseOpenSshPrivateKey(pem: string): SshSigner {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(pem);
  if (!m) throw new SshError('SSH_PRIVATE_KEY_INVALID', 'not an OpenSSH private key (no BEGIN OPENSSH PRIVATE KEY block)');
  const data = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
  const magic = Buffer.from('openssh-key-v1\0');
  if (!data.subarray(0, magic.length).equals(magic)) throw new SshError('SSH_PRIVATE_KEY_INVALID', 'missing openssh-key-v1 magic');
  const r = new SshReader(data.subarray(magic.length), 'OpenSSH private key', 'SSH_PRIVATE_KEY_INVALID');
  const cipher = r.text();
  const kdf = r.text();
  r.string(); // kdf options
  if (cipher !== 'none' || kdf !== 'none') throw new SshError('SSH_PRIVATE_KEY_INVALID', `encrypted OpenSSH private keys are not supported (cipher ${cipher})`);
  const count = r.u32();
  if (count !== 1) throw new SshError('SSH_PRIVATE_KEY_INVALID', `OpenSSH private key file holds ${count} keys, want 1`);
  const publicWire = r.string();
  const priv = new SshReader(r.string(), 'OpenSSH private key section', 'SSH_PRIVATE_KEY_INVALID');
  if (priv.u32() !== priv.u32()) throw new SshError('SSH_PRIVATE_KEY_INVALID', 'OpenSSH private key check values differ (corrupt or encrypted)');
  const type = priv.text();
  if (type !== ED25519) throw new SshError('SSH_PRIVATE_KEY_INVALID', `host key type ${type} is not supported, want ssh-ed25519`);
  const pub = priv.string();
  const secret = priv.string();
  if (pub.length !== 32 || secret.length !== 64) throw new SshError('SSH_PRIVATE_KEY_INVALID', 'malformed ed25519 key lengths');
  const signer = ed25519FromSeed(secret.subarray(0, 32));
  if (!signer.publicWire.equals(publicWire)) throw new SshError('SSH_PRIVATE_KEY_INVALID', 'public key does not match the private key');
  return signer;
}
