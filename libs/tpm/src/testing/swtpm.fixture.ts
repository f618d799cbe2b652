import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManagedProcess } from '@asterism/child-process';
import { TpmClient } from '../client.js';
import { swtpmInit } from '../swtpm-control.js';
import { SocketTransport } from '../transport.js';

/**
 * Test fixture: a real swtpm (libtpms, the TPM QEMU uses) on Unix sockets in a temp dir. Usable by
 * every project's tests (`import { startSwtpm } from '@asterism/tpm/testing'`).
 *
 * - the control socket is `<data socket>.ctrl`, the layout tpm2-tools' `swtpm:path=` TCTI expects;
 * - the pid is recorded in ASTERISM_PID_DIR (the test runner kills leftovers) and every instance is
 *   killed when the test process exits, so no swtpm outlives its tests (`@asterism/child-process`);
 * - swtpm serves one connection at a time: use `client()` (shared) and `disconnect()` before
 *   running tpm2-tools against `tcti`.
 */

/** Whether the swtpm binary is installed (tests pass the result to missingComponent). */
export function swtpmAvailable(): boolean {
  return spawnSync('swtpm', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Whether tpm2-tools are installed (for cross-checks). */
export function tpm2ToolsAvailable(): boolean {
  return spawnSync('tpm2_checkquote', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** How to install the components, for skip/fail messages. */
export const SWTPM_INSTALL_HINT = 'apt-get install -y swtpm swtpm-tools tpm2-tools';

export interface SwtpmOptions {
  /** Reuse a state directory (keys and NV survive; a fresh one means new seeds). */
  stateDir?: string;
  /** Provision an EK and EK certificate with swtpm_setup first (~1 s; needs swtpm-tools). */
  ekCert?: boolean;
}

/** A running swtpm. */
export class Swtpm {
  #client: TpmClient | undefined;

  constructor(
    readonly dir: string,
    readonly stateDir: string,
    readonly socketPath: string,
    readonly ctrlPath: string,
    private readonly process: ManagedProcess,
    private readonly ownsDir: boolean,
  ) {}

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** The tpm2-tools TCTI string for this instance (`TPM2TOOLS_TCTI` or `--tcti`). */
  get tcti(): string {
    return `swtpm:path=${this.socketPath}`;
  }

  /** A new client on a new connection (the caller closes its transport). */
  async connect(): Promise<TpmClient> {
    return new TpmClient(await SocketTransport.connect({ path: this.socketPath }));
  }

  /** The shared client of this instance (one connection, commands queued). */
  async client(): Promise<TpmClient> {
    this.#client ??= await this.connect();
    return this.#client;
  }

  /** Closes the shared connection so another client (e.g. tpm2-tools) can talk to swtpm. */
  async disconnect(): Promise<void> {
    const c = this.#client;
    this.#client = undefined;
    await c?.transport.close();
  }

  /** Simulates a reboot: CMD_INIT (PCRs reset, keys and NV kept), then TPM2_Startup(CLEAR). */
  async reboot(): Promise<void> {
    await swtpmInit({ path: this.ctrlPath });
    await (await this.client()).startup('clear');
  }

  /** Stops swtpm (SIGTERM, SIGKILL after 3 s) and removes the temp dir it created. */
  async stop(): Promise<void> {
    await this.disconnect().catch(() => undefined);
    await this.process.stop(3000);
    if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts swtpm on Unix sockets in a fresh temp dir and waits until it accepts commands. */
export async function startSwtpm(options: SwtpmOptions = {}): Promise<Swtpm> {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-swtpm-'));
  const stateDir = options.stateDir ?? join(dir, 'state');
  mkdirSync(stateDir, { recursive: true });
  if (options.ekCert) {
    const res = spawnSync(
      'swtpm_setup',
      ['--tpm2', '--tpmstate', stateDir, '--create-ek-cert', '--create-platform-cert', '--lock-nvram', '--overwrite', '--pcr-banks', 'sha1,sha256,sha384,sha512'],
      { encoding: 'utf8' },
    );
    if (res.status !== 0) throw new Error(`swtpm_setup failed (${res.status}): ${res.stderr || res.stdout || res.error?.message}`);
  }
  const socketPath = join(dir, 'tpm.sock');
  const ctrlPath = `${socketPath}.ctrl`;
  const child = ManagedProcess.start(
    'swtpm',
    'swtpm',
    ['socket', '--tpm2', '--server', `type=unixio,path=${socketPath}`, '--ctrl', `type=unixio,path=${ctrlPath}`, '--tpmstate', `dir=${stateDir}`, '--flags', 'not-need-init,startup-clear'],
    join(dir, 'swtpm.log'),
  );
  const tpm = new Swtpm(dir, stateDir, socketPath, ctrlPath, child, options.stateDir === undefined);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const failed = await Promise.race([child.spawnFailed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10))]);
    if (failed) {
      await tpm.stop();
      throw new Error(`starting swtpm: ${failed.message}`);
    }
    if (!child.running) {
      await tpm.stop();
      throw new Error(`swtpm exited with code ${child.child.exitCode} before listening`);
    }
    if (existsSync(socketPath) && existsSync(ctrlPath)) {
      try {
        await (await tpm.client()).startup('clear');
        return tpm;
      } catch {
        await tpm.disconnect();
      }
    }
    if (Date.now() > deadline) {
      await tpm.stop();
      throw new Error('swtpm did not accept commands within 10 s');
    }
  }
}
