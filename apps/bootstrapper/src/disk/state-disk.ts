import { readFile } from 'node:fs/promises';
import { runCryptsetup, CryptsetupError } from './cryptsetup.js';

/** What the InitServer and JoinClient do with the node's state disk (docs/protocol/bootstrapper.md). */
export interface StateDisk {
  /** LUKS UUID, lower-cased. */
  uuid(): Promise<string>;
  /** Replaces the initial random passphrase (keyslot 0) with the cluster-derived key. */
  updatePassphrase(passphrase: Uint8Array): Promise<void>;
  /** Marks the disk so the next boot re-formats it (failed bootstrap). */
  markForReset(): Promise<void>;
}

/** The LUKS2 token the reference writes into token slot 0. */
export function stateDiskToken(initialized: boolean): string {
  return JSON.stringify({ type: 'constellation-state-disk', keyslots: [], diskIsInitialized: initialized });
}

/** PBKDF settings for new keyslots; tests use a cheap pbkdf2 to stay fast. */
export interface PbkdfOptions {
  pbkdf: 'argon2id' | 'pbkdf2';
  iterations?: number;
  memoryKiB?: number;
}

/**
 * Keyslot PBKDF presets of the bootstrapper (docs/adr/0006-state-disk-keyslot-pbkdf.md).
 * - `light`: argon2id, 8 MiB, 4 passes, 1 lane (about 0.04 s to set, 0.03 s to unlock; 64 MiB
 *   until the join-latency work of issue 21: 0.23 s / 0.21 s, 0.5 s with four joins at once). The
 *   state disk key is 32 bytes of HKDF output, so a costly KDF adds nothing against guessing.
 * - `benchmarked`: cryptsetup's own benchmark (about 2 s to unlock, up to 1 GiB of memory),
 *   what the reference's libcryptsetup defaults give.
 */
export const STATE_DISK_PBKDF_PRESETS = {
  light: { pbkdf: 'argon2id', iterations: 4, memoryKiB: 8 * 1024 },
  benchmarked: undefined,
} as const satisfies Record<string, PbkdfOptions | undefined>;
export type StateDiskPbkdfPreset = keyof typeof STATE_DISK_PBKDF_PRESETS;

function pbkdfArgs(p: PbkdfOptions | undefined): string[] {
  if (!p) return [];
  const args = ['--pbkdf', p.pbkdf];
  if (p.iterations) args.push('--pbkdf-force-iterations', String(p.iterations));
  if (p.memoryKiB) args.push('--pbkdf-memory', String(p.memoryKiB), '--pbkdf-parallel', '1');
  return args;
}

/**
 * A LUKS2 state disk driven by the real cryptsetup: a block device on a node, or an image file
 * in tests and the local cluster (where device-mapper is unavailable, only header and keyslot
 * operations are used). Keys travel over stdin, never through files or arguments.
 */
export class CryptsetupStateDisk implements StateDisk {
  constructor(
    private readonly device: string,
    /** The initial passphrase written by the disk mapper (`/run/cryptsetup-keys.d/state.key`). */
    private readonly initialKeyPath: string,
    private readonly pbkdf?: PbkdfOptions,
    /**
     * Resolves once the header may be used: the disk mapper formats a fresh disk in the background
     * while the node already serves init (docs/adr/0041-state-disk-mapper.md addendum), and every
     * operation here waits for that format first.
     */
    private readonly ready: () => Promise<void> = () => Promise.resolve(),
  ) {}

  async uuid(): Promise<string> {
    await this.ready();
    const out = (await runCryptsetup({ args: ['luksUUID', this.device] })).trim().toLowerCase();
    if (!out) throw new CryptsetupError('CRYPTSETUP_FAILED', `device ${this.device} has no LUKS UUID`);
    return out;
  }

  async updatePassphrase(passphrase: Uint8Array): Promise<void> {
    await this.ready();
    let initial: Buffer;
    try {
      initial = await readFile(this.initialKeyPath);
    } catch (err) {
      throw new CryptsetupError('CRYPTSETUP_FAILED', `reading initial passphrase ${this.initialKeyPath}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    await runCryptsetup({
      args: [
        'luksChangeKey',
        '--batch-mode',
        '--key-slot',
        '0',
        '--key-file=-',
        `--keyfile-size=${initial.length}`,
        `--new-keyfile-size=${passphrase.length}`,
        ...pbkdfArgs(this.pbkdf),
        this.device,
        '-',
      ],
      stdin: Buffer.concat([initial, Buffer.from(passphrase)]),
    });
    await this.setToken(true);
  }

  async markForReset(): Promise<void> {
    await this.ready();
    await this.setToken(false);
  }

  /** Whether `passphrase` opens a keyslot (header check only; nothing is mapped). */
  async testPassphrase(passphrase: Uint8Array): Promise<boolean> {
    await this.ready();
    try {
      await runCryptsetup({ args: ['open', '--test-passphrase', '--batch-mode', '--key-file=-', this.device], stdin: passphrase });
      return true;
    } catch (err) {
      if (err instanceof CryptsetupError && err.code === 'WRONG_PASSPHRASE') return false;
      throw err;
    }
  }

  /** The JSON of token 0, or null when none is set. */
  async token(): Promise<Record<string, unknown> | null> {
    await this.ready();
    try {
      return JSON.parse(await runCryptsetup({ args: ['token', 'export', '--token-id', '0', this.device] })) as Record<string, unknown>;
    } catch {
      return null;
    }
  }

  private async setToken(initialized: boolean): Promise<void> {
    await runCryptsetup({ args: ['token', 'import', '--token-id', '0', '--token-replace', this.device], stdin: stateDiskToken(initialized) });
  }
}

/**
 * Formats a LUKS2 container the way the disk mapper does on first boot: random passphrase in
 * keyslot 0, label `state`. For tests and the local cluster (image files).
 */
export async function formatStateDisk(device: string, passphrase: Uint8Array, pbkdf: PbkdfOptions = { pbkdf: 'pbkdf2', iterations: 1000 }): Promise<void> {
  await runCryptsetup({
    args: ['luksFormat', '--type', 'luks2', '--batch-mode', '--label', 'state', '--key-slot', '0', '--key-file=-', ...pbkdfArgs(pbkdf), device],
    stdin: passphrase,
  });
}
