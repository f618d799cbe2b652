/**
 * The disk-mapper role on a node with a real device-mapper (docs/adr/0041-state-disk-mapper.md,
 * docs/protocol/node-image.md "State disk"): a blank (or reset) state disk is formatted with
 * LUKS2 + dm-integrity under a random initial key, opened, given a file system and mounted where
 * the node's state, containerd and the kubelet live; a disk that belongs to a cluster stays locked
 * until the rejoin or recovery key arrives, and that key is checked against the header before
 * anything is mapped, so a wrong key never destroys data.
 */
import { randomBytes } from 'node:crypto';
import { access, chmod, cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runCommand } from '@asterism/child-process';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import { CryptsetupError, runCryptsetup, type CryptsetupRun } from './cryptsetup.js';
import { edgeRanges, ext4PrezeroRanges, parseMke2fsDryRun, type BlockRange } from './ext4-layout.js';
import { stateDiskToken } from './state-disk.js';

/** A disk-mapper step failed (device missing, mkfs or mount failed). Messages carry no key material. */
export class DiskMapperError extends AsterismError<'STATE_DISK_MISSING' | 'STATE_DISK_SETUP_FAILED'> {}

/** The programs the mapper runs; the real ones by default, recorded ones in unit tests. */
export interface MapperCommands {
  cryptsetup(run: CryptsetupRun): Promise<string>;
  /** Runs a program to completion and resolves its stdout; rejects with its stderr's last line. */
  run(binary: string, args: string[]): Promise<string>;
  /** Whether a path exists (the state disk's device node, its mapping). */
  exists(path: string): Promise<boolean>;
}

/** Where the state disk goes and how it is formatted. */
export interface DiskMapperConfig {
  /** The raw state disk (`/dev/disk/by-id/virtio-state` on a QEMU node). */
  device: string;
  /** Where the random initial key of a fresh disk goes (read again by the re-key after init or join). */
  initialKeyPath: string;
  /** Device-mapper name of the opened disk (`/dev/mapper/<name>`). */
  mappingName: string;
  /** Where the file system is mounted (the node state, kubelet PKI and components live under it). */
  mountPoint: string;
  /** Folders of the root that live on the disk: `/var/lib/containerd` is bound from `<mountPoint>/var/lib/containerd`. */
  binds: string[];
  /** Units started once the disk is mounted (containerd; empty without systemd). */
  services: string[];
  /** How long to wait for the device node to appear (udev). */
  deviceTimeoutMs?: number;
}

/** What prepare() found: a fresh disk is being formatted (diskReady() says when it is open), an open one was kept, a cluster's disk waits for its key. */
export type PreparedDisk = 'formatted' | 'open' | 'locked';

/** The folders containerd, the kubelet and kubeadm keep their state in (all on the state disk). */
export const STATE_DISK_BINDS = ['/var/lib/containerd', '/var/lib/kubelet', '/etc/kubernetes', '/var/lib/etcd'];

/**
 * The file system's options: 4 KiB blocks, no discard (nothing to discard on a fresh integrity
 * device), inode tables and journal written in full by mke2fs, so the kernel never reads a
 * never-written block of them (docs/adr/0041-state-disk-mapper.md addendum).
 */
const MKFS_ARGS = ['-L', 'state', '-b', '4096', '-E', 'nodiscard,lazy_itable_init=0,lazy_journal_init=0'];
const BLOCK_SIZE = 4096;

/** The real programs (cryptsetup, mkfs.ext4, mount, systemctl). */
export const REAL_MAPPER_COMMANDS: MapperCommands = {
  cryptsetup: (run) => runCryptsetup(run),
  async run(binary, args) {
    const r = await runCommand(binary, args, { stdin: '' });
    if (r.code !== 0) throw new DiskMapperError('STATE_DISK_SETUP_FAILED', `${binary} ${args[0] ?? ''} failed (exit ${r.code}): ${r.stderr.trim().split('\n').pop() ?? ''}`);
    return r.stdout;
  },
  exists: (path) => access(path).then(() => true, () => false),
};

/** Sets up the node's state disk (format, open, mount) and unlocks it with a delivered key. */
export class StateDiskMapper {
  constructor(
    private readonly cfg: DiskMapperConfig,
    private readonly logger: Logger,
    private readonly cmd: MapperCommands = REAL_MAPPER_COMMANDS,
  ) {}

  /** The start of the services on the disk (containerd); on a freshly formatted disk it runs in the background. */
  private servicesStarted: Promise<void> = Promise.resolve();
  /** The format of a fresh disk, running in the background after prepare(). */
  private formatting: Promise<void> = Promise.resolve();

  /**
   * Resolves once a format prepare() started is done (the disk is open and mounted; at once when
   * there was none) and rejects with its error. The node serves init while a fresh disk is
   * formatted: anything that uses the header or the mounted disk awaits this first.
   */
  diskReady(): Promise<void> {
    return this.formatting;
  }

  /**
   * Resolves once the disk is ready and the services whose data live on it are active, and rejects
   * with STATE_DISK_SETUP_FAILED when one is not. After a format containerd starts in the
   * background (seconds under TCG that init or join does not need yet): whatever runs containers
   * (kubeadm, the component installer) awaits this first (docs/adr/0041-state-disk-mapper.md).
   */
  servicesReady(): Promise<void> {
    return this.formatting.then(() => this.servicesStarted);
  }

  /** The opened disk's block device. */
  get mappedDevice(): string {
    return `/dev/mapper/${this.cfg.mappingName}`;
  }

  /**
   * First step of every boot: waits for the device; an open mapping (the bootstrapper restarted in
   * this boot) is mounted if needed; a blank disk, or one a failed bootstrap marked for reset, is
   * formatted and opened in the background (diskReady()); any other LUKS disk stays locked for
   * the rejoin or recovery key.
   */
  async prepare(): Promise<PreparedDisk> {
    await this.waitForDevice();
    if (await this.cmd.exists(this.mappedDevice)) {
      await this.mount();
      return 'open';
    }
    if (await this.isLuks()) {
      const token = await this.token();
      // Only an explicit "not initialised" token (set at format time, or by markForReset) allows a new format.
      if (token?.diskIsInitialized !== false) return 'locked';
      this.logger.warn('state disk was marked for reset by a failed bootstrap: formatting it again', { device: this.cfg.device });
    }
    this.formatting = this.format();
    // Observed here so a failure is logged at once; diskReady() hands the same rejection to init or join.
    this.formatting.catch((err: unknown) => this.logger.error('state disk format failed', { err }));
    return 'formatted';
  }

  /**
   * Opens a locked disk with the delivered key and mounts it. The key is checked against the
   * header first: a wrong key throws WRONG_PASSPHRASE and nothing is mapped, written or wiped.
   */
  async unlock(key: Uint8Array): Promise<void> {
    const started = Date.now();
    await this.cmd.cryptsetup({ args: ['open', '--test-passphrase', '--batch-mode', '--key-file=-', this.cfg.device], stdin: key });
    await this.cmd.cryptsetup({ args: ['open', '--type', 'luks2', '--batch-mode', '--key-file=-', this.cfg.device, this.cfg.mappingName], stdin: key });
    await this.mount();
    this.logger.info('state disk unlocked', { device: this.cfg.device, mapping: this.mappedDevice, ms: Date.now() - started });
  }

  private async waitForDevice(): Promise<void> {
    const deadline = Date.now() + (this.cfg.deviceTimeoutMs ?? 60_000);
    while (!(await this.cmd.exists(this.cfg.device))) {
      if (Date.now() > deadline) throw new DiskMapperError('STATE_DISK_MISSING', `no state disk ${this.cfg.device} after ${this.cfg.deviceTimeoutMs ?? 60_000} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async isLuks(): Promise<boolean> {
    try {
      await this.cmd.cryptsetup({ args: ['isLuks', this.cfg.device] });
      return true;
    } catch (err) {
      // isLuks exits 1 for "not LUKS"; anything else (missing cryptsetup) is a real failure.
      if (err instanceof CryptsetupError && err.code === 'CRYPTSETUP_FAILED' && err.details.exitCode === 1) return false;
      throw err;
    }
  }

  private async token(): Promise<Record<string, unknown> | null> {
    try {
      return JSON.parse(await this.cmd.cryptsetup({ args: ['token', 'export', '--token-id', '0', this.cfg.device] })) as Record<string, unknown>;
    } catch {
      return null;
    }
  }

  /**
   * LUKS2 + hmac-sha256 integrity under a new random key (written for the later re-key), token
   * "not initialised", open, ext4, mount. No integrity wipe: only the blocks mke2fs reads before
   * writing are written with zeros first, then mke2fs writes the rest of its metadata in whole
   * blocks (docs/adr/0041-state-disk-mapper.md addendum "Formatting without the full wipe").
   */
  private async format(): Promise<void> {
    const t0 = Date.now();
    const key = randomBytes(32);
    await mkdir(dirname(this.cfg.initialKeyPath), { recursive: true, mode: 0o700 });
    await writeFile(this.cfg.initialKeyPath, key, { mode: 0o600 });
    // The initial key is 32 random bytes living only in this boot's tmpfs: a slow KDF adds nothing (docs/adr/0041).
    // 4 KiB encryption sectors, as the file system's blocks: one integrity tag per block (docs/adr/0039, the write path).
    await this.cmd.cryptsetup({
      args: ['luksFormat', '--batch-mode', '--type', 'luks2', '--label', 'state', '--key-slot', '0', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', '--integrity', 'hmac-sha256', '--integrity-no-wipe', '--sector-size', '4096', '--key-file=-', this.cfg.device],
      stdin: key,
    });
    await this.cmd.cryptsetup({ args: ['token', 'import', '--token-id', '0', '--token-replace', this.cfg.device], stdin: stateDiskToken(false) });
    const t1 = Date.now();
    await this.cmd.cryptsetup({ args: ['open', '--type', 'luks2', '--batch-mode', '--key-file=-', this.cfg.device, this.cfg.mappingName], stdin: key });
    const t2 = Date.now();
    const zeroedBytes = await this.prepareMetadataBlocks();
    const t3 = Date.now();
    await this.cmd.run('mkfs.ext4', ['-q', ...MKFS_ARGS, this.mappedDevice]);
    const t4 = Date.now();
    await this.mount('background');
    const uuid = (await this.cmd.cryptsetup({ args: ['luksUUID', this.cfg.device] })).trim();
    this.logger.info('state disk formatted', { device: this.cfg.device, uuid, integrity: 'hmac-sha256', sectorSize: 4096, wipe: 'metadata', zeroedMiB: Math.round(zeroedBytes / 2 ** 20), formatMs: t1 - t0, openMs: t2 - t1, zeroMs: t3 - t2, mkfsMs: t4 - t3, mountMs: Date.now() - t4 });
  }

  /** Writes zeros where mke2fs (and its blkid probe) reads before writing; returns the bytes written. */
  private async prepareMetadataBlocks(): Promise<number> {
    const bytes = Number((await this.cmd.run('blockdev', ['--getsize64', this.mappedDevice])).trim());
    if (!Number.isSafeInteger(bytes) || bytes < 16 * BLOCK_SIZE) throw new DiskMapperError('STATE_DISK_SETUP_FAILED', `the opened state disk reports an unusable size (${bytes} bytes)`);
    const edges = edgeRanges(bytes, BLOCK_SIZE);
    await this.writeZeros(edges);
    const ranges = ext4PrezeroRanges(parseMke2fsDryRun(await this.cmd.run('mkfs.ext4', ['-n', ...MKFS_ARGS, this.mappedDevice])));
    await this.writeZeros(ranges);
    return [...edges, ...ranges].reduce((sum, r) => sum + r.count * BLOCK_SIZE, 0);
  }

  private async writeZeros(ranges: BlockRange[]): Promise<void> {
    for (const r of ranges) {
      // 1 MiB direct writes: 4 KiB ones each pay dm-integrity's journal commit (0.6 MB/s under TCG).
      await this.cmd.run('dd', ['if=/dev/zero', `of=${this.mappedDevice}`, 'bs=1M', `seek=${r.start * BLOCK_SIZE}`, `count=${r.count * BLOCK_SIZE}`, 'iflag=count_bytes', 'oflag=seek_bytes,direct', 'conv=notrunc', 'status=none']);
    }
  }

  /**
   * Mounts the file system at the mount point (what tmpfs held there before, e.g. this boot's SSH
   * host key, is carried over), binds the listed folders from it, logs the device-mapper targets,
   * and starts the services that keep their data on it: awaited, or (`background`, a fresh disk)
   * left to servicesReady().
   */
  private async mount(services: 'await' | 'background' = 'await'): Promise<void> {
    const { mountPoint } = this.cfg;
    if (!(await this.isMounted(mountPoint))) {
      await mkdir(mountPoint, { recursive: true });
      const carried = await readdir(mountPoint);
      if (carried.length > 0) {
        // `mount --move` is refused under the shared /run: copy through a staging mount instead.
        const staging = `${mountPoint}.carry`;
        await mkdir(staging, { recursive: true });
        await this.cmd.run('mount', ['-t', 'ext4', this.mappedDevice, staging]);
        try {
          for (const entry of carried) await cp(join(mountPoint, entry), join(staging, entry), { recursive: true, force: true, preserveTimestamps: true });
        } finally {
          await this.cmd.run('umount', [staging]);
        }
        await rm(staging, { recursive: true, force: true });
      }
      await this.cmd.run('mount', ['-t', 'ext4', this.mappedDevice, mountPoint]);
      await chmod(mountPoint, 0o755);
    }
    for (const target of this.cfg.binds) {
      if (await this.isMounted(target)) continue;
      const source = join(mountPoint, target);
      await mkdir(source, { recursive: true });
      await mkdir(target, { recursive: true });
      await this.cmd.run('mount', ['--bind', source, target]);
    }
    await this.logTable();
    this.servicesStarted = this.startServices();
    if (services === 'await') return this.servicesStarted;
    // Observed here so a failure is logged at once; servicesReady() hands the same rejection to init or join.
    this.servicesStarted.catch((err: unknown) => this.logger.error('state disk service failed to start', { err }));
  }

  /** Starts the services whose data live on the disk; a unit whose condition skipped it (disk not bound) is an error. */
  private async startServices(): Promise<void> {
    for (const unit of this.cfg.services) {
      const started = Date.now();
      await this.cmd.run('systemctl', ['start', unit]);
      await this.cmd.run('systemctl', ['is-active', '--quiet', unit]).catch((err: unknown) => {
        throw new DiskMapperError('STATE_DISK_SETUP_FAILED', `${unit} is not active after starting it (its data folder must be on the mounted state disk)`, { cause: err });
      });
      this.logger.info('state disk service started', { unit, ms: Date.now() - started });
    }
  }

  private isMounted(path: string): Promise<boolean> {
    return this.cmd.run('mountpoint', ['-q', path]).then(() => true, () => false);
  }

  /** The device-mapper targets under the mapping (crypt over integrity), for the console log; `dmsetup table` never prints keys. */
  private async logTable(): Promise<void> {
    const table = await this.cmd.run('dmsetup', ['table']).catch(() => '');
    const targets = table
      .split('\n')
      .filter((l) => l.startsWith(this.cfg.mappingName))
      .map((l) => {
        const [name, , , type] = l.split(/\s+/);
        return `${name!.replace(/:$/, '')}=${type}`;
      });
    this.logger.info('state disk mapped', { mapping: this.mappedDevice, mountPoint: this.cfg.mountPoint, targets: targets.join(','), binds: this.cfg.binds.join(',') });
  }
}
