/**
 * Linux configfs-tsm (`/sys/kernel/config/tsm/report`), the kernel's ioctl-free interface to a
 * confidential guest's attestation firmware, for both providers Asterism uses: `sev_guest` (SEV-SNP
 * extended reports, docs/protocol/sev-snp.md §8) and `tdx_guest` (TDX quotes,
 * docs/protocol/tdx-dcap.md). Node cannot issue the /dev/sev-guest or /dev/tdx_guest ioctls.
 *
 * One request = one entry directory: create it (the kernel adds `provider`, `generation`,
 * `privlevel`, `inblob`, `outblob`, `auxblob`), check the provider, write `privlevel` (optional)
 * and `inblob`, read `outblob` (and `auxblob`), check that `generation` counts exactly our writes
 * (another writer in between would have changed what `outblob` answers), remove the entry. The file
 * system is a port so tests can use a directory that replays recorded bytes the way configfs does.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AttestationError } from '../errors.js';

/** Default configfs-tsm report directory. */
export const CONFIGFS_TSM_REPORT_DIR = '/sys/kernel/config/tsm/report';

/** The configfs-tsm providers (the guest driver that answers). */
export type TsmProvider = 'sev_guest' | 'tdx_guest';

/** File operations the client needs (node:fs/promises by default). */
export interface TsmFileSystem {
  mkdir(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  readFile(path: string): Promise<Buffer>;
  exists(path: string): boolean;
}

/** The real file system. */
export const NODE_TSM_FS: TsmFileSystem = {
  mkdir: async (p) => void (await mkdir(p)),
  rmdir: (p) => rmdir(p),
  writeFile: (p, d) => writeFile(p, d),
  readFile: (p) => readFile(p),
  exists: (p) => existsSync(p),
};

/** Why a configfs-tsm request failed (`details.tsm` of the ISSUER_FAILED error). */
export type TsmFailure =
  | 'request-invalid'
  | 'no-interface'
  | 'ioctl-only'
  | 'provider-mismatch'
  | 'io'
  | 'raced'
  | 'empty'
  /** outblob shorter than the provider's report (SEV-SNP adapter). */
  | 'short';

/** What the firmware answered. */
export interface TsmAnswer {
  /** The report (SEV-SNP) or quote (TDX). */
  readonly outblob: Buffer;
  /** Auxiliary data: SEV-SNP's certificate table; empty when the entry has none. */
  readonly auxblob: Buffer;
}

/** Where the client looks (a node's paths may live under a state root). */
export interface ConfigfsTsmOptions {
  /** The report directory (default CONFIGFS_TSM_REPORT_DIR). */
  readonly root?: string;
  readonly fs?: TsmFileSystem;
  /** The provider's ioctl device, named in the error when configfs-tsm is missing (default /dev/sev-guest or /dev/tdx_guest). */
  readonly devicePath?: string;
}

const DEVICE: Record<TsmProvider, { path: string; what: string; driver: string }> = {
  sev_guest: { path: '/dev/sev-guest', what: 'SEV-SNP', driver: 'sev-guest' },
  tdx_guest: { path: '/dev/tdx_guest', what: 'TDX', driver: 'tdx_guest' },
};

/** A configfs-tsm client for one provider; every failure is ISSUER_FAILED with `details.tsm`. */
export class ConfigfsTsm {
  readonly root: string;
  readonly #fs: TsmFileSystem;
  readonly #device: string;

  constructor(
    readonly provider: TsmProvider,
    options: ConfigfsTsmOptions = {},
  ) {
    this.root = options.root ?? CONFIGFS_TSM_REPORT_DIR;
    this.#fs = options.fs ?? NODE_TSM_FS;
    this.#device = options.devicePath ?? DEVICE[provider].path;
  }

  /** One report for 64 bytes of `inblob` (REPORT_DATA), at `privlevel` (SEV-SNP VMPL) when given. */
  async report(inblob: Uint8Array, privlevel?: number, signal?: AbortSignal): Promise<TsmAnswer> {
    if (inblob.length !== 64) throw this.failed('request-invalid', `report data must be 64 bytes, got ${inblob.length}`);
    this.requireInterface();
    const entry = join(this.root, `asterism-${randomBytes(8).toString('hex')}`);
    try {
      await this.#fs.mkdir(entry);
    } catch (err) {
      throw this.failed('io', `creating configfs-tsm entry ${entry}: ${(err as Error).message}`, { path: entry });
    }
    try {
      signal?.throwIfAborted();
      return await this.request(entry, inblob, privlevel);
    } finally {
      await this.#fs.rmdir(entry).catch(() => undefined);
    }
  }

  /** A clear error when configfs-tsm is missing, naming whether only the ioctl device exists. */
  private requireInterface(): void {
    if (this.#fs.exists(this.root)) return;
    const d = DEVICE[this.provider];
    if (this.#fs.exists(this.#device)) {
      throw this.failed(
        'ioctl-only',
        `configfs-tsm is not available at ${this.root}; ${this.#device} exists but needs an ioctl, which Node.js cannot issue. Use a kernel with CONFIG_TSM_REPORTS (Linux 6.7 or later) and mount configfs (mount -t configfs none /sys/kernel/config)`,
        { path: this.root, device: this.#device },
      );
    }
    throw this.failed('no-interface', `no ${d.what} guest interface: ${this.root} (configfs-tsm) does not exist and there is no ${this.#device} - is this a ${d.what} guest with the ${d.driver} driver loaded?`, {
      path: this.root,
      device: this.#device,
    });
  }

  private async request(entry: string, inblob: Uint8Array, privlevel: number | undefined): Promise<TsmAnswer> {
    const provider = (await this.read(entry, 'provider')).toString('utf8').trim();
    if (provider !== this.provider) throw this.failed('provider-mismatch', `configfs-tsm provider is ${JSON.stringify(provider)}, expected "${this.provider}"`, { actual: provider });
    const start = this.generation(await this.read(entry, 'generation'));
    let writes = 0;
    try {
      if (privlevel !== undefined && this.#fs.exists(join(entry, 'privlevel'))) {
        await this.#fs.writeFile(join(entry, 'privlevel'), Buffer.from(`${privlevel}\n`));
        writes++;
      }
      await this.#fs.writeFile(join(entry, 'inblob'), inblob);
      writes++;
    } catch (err) {
      throw this.failed('io', `writing the report request to ${entry}: ${(err as Error).message}`, { path: entry });
    }
    const outblob = await this.read(entry, 'outblob');
    const auxblob = this.#fs.exists(join(entry, 'auxblob')) ? await this.read(entry, 'auxblob') : Buffer.alloc(0);
    const end = this.generation(await this.read(entry, 'generation'));
    if (end !== start + writes) {
      throw this.failed('raced', `configfs-tsm entry ${entry} was written by someone else meanwhile (generation ${start} -> ${end}, ${writes} writes of ours)`, { path: entry, start, end, writes });
    }
    if (outblob.length === 0) throw this.failed('empty', `configfs-tsm entry ${entry} returned an empty outblob`, { path: entry });
    return { outblob, auxblob };
  }

  private async read(entry: string, name: string): Promise<Buffer> {
    const path = join(entry, name);
    try {
      return await this.#fs.readFile(path);
    } catch (err) {
      throw this.failed('io', `reading ${path}: ${(err as Error).message}`, { path });
    }
  }

  private generation(raw: Buffer): number {
    const text = raw.toString('utf8').trim();
    if (!/^\d+$/.test(text)) throw this.failed('io', `configfs-tsm generation ${JSON.stringify(text)} is not a number`);
    return Number(text);
  }

  private failed(tsm: TsmFailure, message: string, details: Record<string, unknown> = {}): AttestationError {
    return new AttestationError('ISSUER_FAILED', message, { details: { step: 'configfs-tsm report', provider: this.provider, tsm, ...details } });
  }
}
