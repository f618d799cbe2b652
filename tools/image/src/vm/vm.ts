/**
 * One QEMU VM booting a node image the way the acceptance tests and tools/local-cluster boot it
 * (docs/protocol/node-image.md "Booting"): TCG (no KVM on the project's machines), OVMF as pflash
 * with a fresh copy of its variable store, the image as a read-only virtio disk with boot index 0,
 * an swtpm vTPM on tpm-crb, optionally a state disk and a tap device of a VmNetwork, the serial
 * console in a file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VmNetwork } from './vm-network.js';

/** OVMF as Debian 12 installs it (package ovmf). */
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
/** vCPUs of a VM unless its options say otherwise (see VmOptions.cpus). */
export const DEFAULT_CPUS = 2;
/** OVMF's empty variable store (copied per VM). */
export const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';

/** How to boot. */
export interface VmOptions {
  readonly image: string;
  /** Folder for the vTPM state, variable store and console log. */
  readonly dir: string;
  readonly network?: VmNetwork;
  /** A raw file attached as the state disk (virtio-blk, serial `state`: /dev/disk/by-id/virtio-state). */
  readonly stateDisk?: string;
  readonly memoryMiB?: number;
  /**
   * vCPUs (default 2: QEMU runs each vCPU of a TCG guest in its own host thread, and systemd's
   * parallel start-up then uses the second host core; boot to "joining as" 7-9% shorter than with
   * one vCPU, two pairs side by side at host load 7-16, docs/protocol/node-image.md "Boot time").
   */
  readonly cpus?: number;
}

/**
 * Manufactures a new vTPM with only the SHA-256 PCR bank active, as swtpm_setup (and so libvirt)
 * does by default; a vTPM state swtpm creates by itself has four banks, and the firmware and the UKI
 * stub then hash every measured image four times in emulated code (docs/protocol/node-image.md
 * "Boot time"). Attestation reads the SHA-256 bank only. A state that exists (a reboot) is kept.
 */
function provisionVtpm(tpmDir: string): void {
  if (existsSync(join(tpmDir, 'tpm2-00.permall'))) return;
  const r = spawnSync('swtpm_setup', ['--tpm2', '--tpmstate', tpmDir, '--pcr-banks', 'sha256', '--overwrite'], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`swtpm_setup failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? '').trim().slice(-500)}`);
}

/** True when QEMU, OVMF and swtpm are installed. */
export function vmToolsAvailable(): boolean {
  return ['/usr/bin/qemu-system-x86_64', '/usr/bin/swtpm', OVMF_CODE, OVMF_VARS].every((p) => existsSync(p));
}

/** QEMU and swtpm processes still running: killed when this process exits or is terminated (a test timed out). */
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const child of running) child.kill('SIGKILL');
};
process.once('exit', killRunning);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    killRunning();
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });
}

/** A running VM and its vTPM. */
export class Vm {
  private exitCode: number | null | undefined;

  private constructor(
    private readonly qemu: ChildProcess,
    private readonly swtpm: ChildProcess,
    /** The serial console log. */
    readonly consolePath: string,
    /** When QEMU was started (ms since the epoch). */
    readonly startedAt: number,
  ) {
    running.add(qemu).add(swtpm);
    qemu.on('exit', (code) => {
      this.exitCode = code;
      running.delete(qemu);
    });
    swtpm.on('exit', () => running.delete(swtpm));
  }

  /** Starts swtpm, then QEMU (inside the network's namespace when given). */
  static async boot(o: VmOptions): Promise<Vm> {
    const tpmDir = join(o.dir, 'tpm');
    mkdirSync(tpmDir, { recursive: true });
    const sock = join(tpmDir, 'swtpm.sock');
    provisionVtpm(tpmDir);
    const swtpm = spawn('swtpm', ['socket', '--tpm2', '--tpmstate', `dir=${tpmDir}`, '--ctrl', `type=unixio,path=${sock}`, '--log', `file=${join(o.dir, 'swtpm.log')}`], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50));
    if (!existsSync(sock)) {
      swtpm.kill('SIGKILL');
      throw new Error('swtpm did not create its socket within 5 s');
    }
    const vars = join(o.dir, 'OVMF_VARS.fd');
    copyFileSync(OVMF_VARS, vars);
    const consolePath = join(o.dir, 'console.log');
    const args = qemuArgs(o, vars, sock, consolePath);
    const [cmd, argv] = o.network ? o.network.exec('qemu-system-x86_64', args) : ['qemu-system-x86_64', args];
    const qemu = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    qemu.stderr?.on('data', () => undefined);
    return new Vm(qemu, swtpm, consolePath, Date.now());
  }

  /** The console output so far. */
  console(): string {
    return existsSync(this.consolePath) ? readFileSync(this.consolePath, 'latin1') : '';
  }

  /** QEMU's exit code once it ended (the guest powered off or panicked with -no-reboot), else undefined. */
  get exited(): number | null | undefined {
    return this.exitCode;
  }

  /** Waits until the console matches `pattern` (returns the match) or QEMU exits / the time is up (throws). */
  async waitForConsole(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.console().match(pattern);
      if (m) return m;
      if (this.exitCode !== undefined) throw new Error(`QEMU exited (${this.exitCode}) before the console showed ${pattern}; console tail:\n${this.console().slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`console did not show ${pattern} within ${timeoutMs} ms; tail:\n${this.console().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Waits for QEMU to exit on its own (up to `timeoutMs`); the exit code, or undefined when it still runs. */
  async waitForExit(timeoutMs: number): Promise<number | null | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.exitCode === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    return this.exitCode;
  }

  /** Kills QEMU and swtpm. */
  async stop(): Promise<void> {
    if (this.exitCode === undefined) {
      const gone = new Promise((r) => this.qemu.once('exit', r));
      this.qemu.kill('SIGKILL');
      await gone;
    }
    this.swtpm.kill('SIGKILL');
  }
}

function qemuArgs(o: VmOptions, vars: string, sock: string, consolePath: string): string[] {
  const net = o.network
    ? ['-netdev', `tap,id=n0,ifname=${o.network.tap},script=no,downscript=no`, '-device', 'virtio-net-pci,netdev=n0,romfile=']
    : ['-net', 'none'];
  return [
    ...['-machine', 'q35,accel=tcg', '-cpu', 'max', '-smp', String(o.cpus ?? DEFAULT_CPUS), '-m', String(o.memoryMiB ?? 2048)],
    ...['-display', 'none', '-monitor', 'none', '-no-reboot', '-serial', `file:${consolePath}`],
    ...['-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,unit=1,file=${vars}`],
    ...['-drive', `if=none,id=disk0,format=raw,readonly=on,file=${o.image}`, '-device', 'virtio-blk-pci,drive=disk0,bootindex=0'],
    ...['-chardev', `socket,id=chrtpm,path=${sock}`, '-tpmdev', 'emulator,id=tpm0,chardev=chrtpm', '-device', 'tpm-crb,tpmdev=tpm0'],
    ...(o.stateDisk ? ['-drive', `if=none,id=state,format=raw,file=${o.stateDisk}`, '-device', 'virtio-blk-pci,drive=state,serial=state'] : []),
    ...net,
  ];
}
