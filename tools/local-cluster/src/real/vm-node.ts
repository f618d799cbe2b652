/**
 * A VM node of the local cluster (docs/adr/0039-vm-nodes-local-cluster.md): the node image booted
 * by QEMU (TCG: no usable KVM on the project's machines) with OVMF, a swtpm vTPM on tpm-crb (its
 * state manufactured with only the SHA-256 bank), a blank sparse state disk (the image formats
 * it: docs/adr/0041), and a tap device on the cluster bridge. QEMU and swtpm are detached
 * processes (they outlive `up`); QEMU runs inside the router namespace, where the tap lives. The
 * guest reboots in place (no -no-reboot). The serial console goes to `<node dir>/console.log`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, truncate, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startDetached, stopDetached } from '../detached.js';
import type { ClusterLayout } from '../layout.js';
import { NETWORK } from './network.js';
import type { VmNic } from './vm-network.js';

const run = promisify(execFile);

/** OVMF as Debian 12's package installs it. */
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';

/** How a VM node is sized. */
export interface VmSize {
  memoryMiB: number;
  cpus: number;
  /** Size of the state disk (the integrity wipe at first boot costs ~100 s per GiB under TCG). */
  stateDiskMiB: number;
}

/**
 * Defaults: a worker's components (binaries ~240 MB, CNI plugins, the images a worker imports:
 * pause, kube-proxy, verification-service) and containerd's unpacked snapshots, ~0.6 GB, fit.
 */
export const DEFAULT_VM_SIZE: VmSize = { memoryMiB: 2048, cpus: 1, stateDiskMiB: 1024 };

/** Files of one VM node below its node folder. */
export function vmPaths(layout: ClusterLayout, name: string) {
  const dir = layout.nodeDir(name);
  return {
    dir,
    console: join(dir, 'console.log'),
    monitor: join(dir, 'monitor.sock'),
    vars: join(dir, 'OVMF_VARS.fd'),
    tpmDir: layout.tpmDir(name),
    tpmSocket: join(layout.tpmDir(name), 'vm.sock'),
    stateDisk: layout.diskImage(name),
  };
}

/** True when QEMU, OVMF, swtpm and swtpm_setup are installed. */
export function vmToolsMissing(): string[] {
  return ['/usr/bin/qemu-system-x86_64', '/usr/bin/swtpm', '/usr/bin/swtpm_setup', OVMF_CODE, OVMF_VARS].filter((p) => !existsSync(p));
}

/** The pids of a running VM node. */
export interface VmProcesses {
  qemu: number;
  swtpm: number;
}

/**
 * Boots `image` as node `name`: manufactures the vTPM and creates the blank state disk on the
 * first boot (kept on later boots: a reboot keeps both), then starts swtpm and QEMU.
 */
export async function bootVm(layout: ClusterLayout, name: string, image: string, nic: VmNic, size: VmSize): Promise<VmProcesses> {
  const p = vmPaths(layout, name);
  await mkdir(p.tpmDir, { recursive: true, mode: 0o700 });
  if (!existsSync(join(p.tpmDir, 'tpm2-00.permall'))) {
    await run('swtpm_setup', ['--tpm2', '--tpmstate', p.tpmDir, '--pcr-banks', 'sha256', '--overwrite'], { timeout: 60_000 });
  }
  if (!existsSync(p.stateDisk)) {
    await writeFile(p.stateDisk, '');
    await truncate(p.stateDisk, size.stateDiskMiB * 2 ** 20);
  }
  if (!existsSync(p.vars)) await copyFile(OVMF_VARS, p.vars);
  const swtpm = startDetached('swtpm', 'swtpm', ['socket', '--tpm2', '--tpmstate', `dir=${p.tpmDir}`, '--ctrl', `type=unixio,path=${p.tpmSocket}`], layout.log(name, 'swtpm'));
  for (let i = 0; i < 200 && !existsSync(p.tpmSocket); i++) await new Promise((r) => setTimeout(r, 25));
  if (!existsSync(p.tpmSocket)) {
    await stopDetached(swtpm.pid, 1000);
    throw new Error(`swtpm of ${name} did not create ${p.tpmSocket} (see ${layout.log(name, 'swtpm')})`);
  }
  const qemu = startDetached('qemu', 'nsenter', [`--net=/run/netns/${NETWORK.routerNamespace}`, 'qemu-system-x86_64', ...qemuArgs(p, image, nic, size)], layout.log(name, 'qemu'));
  return { qemu: qemu.pid, swtpm: swtpm.pid };
}

/** QEMU's arguments (docs/protocol/node-image.md "Interfaces a VM must provide"). */
export function qemuArgs(p: ReturnType<typeof vmPaths>, image: string, nic: VmNic, size: VmSize): string[] {
  return [
    ...['-machine', 'q35,accel=tcg', '-cpu', 'max', '-smp', String(size.cpus), '-m', String(size.memoryMiB)],
    ...['-display', 'none', '-serial', `file:${p.console}`, '-monitor', `unix:${p.monitor},server=on,wait=off`],
    ...['-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,unit=1,file=${p.vars}`],
    ...['-drive', `if=none,id=disk0,format=raw,readonly=on,file=${image}`, '-device', 'virtio-blk-pci,drive=disk0,bootindex=0'],
    ...['-chardev', `socket,id=chrtpm,path=${p.tpmSocket}`, '-tpmdev', 'emulator,id=tpm0,chardev=chrtpm', '-device', 'tpm-crb,tpmdev=tpm0'],
    ...['-drive', `if=none,id=state,format=raw,file=${p.stateDisk}`, '-device', 'virtio-blk-pci,drive=state,serial=state'],
    ...['-netdev', `tap,id=n0,ifname=${nic.tap},script=no,downscript=no`, '-device', `virtio-net-pci,netdev=n0,mac=${nic.mac},romfile=`],
  ];
}

/** Sends one command to the VM's QEMU monitor (HMP). */
export async function monitorCommand(layout: ClusterLayout, name: string, command: string): Promise<void> {
  const path = vmPaths(layout, name).monitor;
  await new Promise<void>((resolve, reject) => {
    const sock = connect(path, () => {
      sock.write(`${command}\n`);
      setTimeout(() => {
        sock.destroy();
        resolve();
      }, 500);
    });
    sock.once('error', reject);
  });
}

/** Stops a VM node's QEMU, then its swtpm (the disk, vTPM state and console log stay). */
export async function stopVm(vm: VmProcesses): Promise<void> {
  // 0: not started yet (a boot that failed early); signalling pid 0 would hit our own group.
  if (vm.qemu > 0) await stopDetached(vm.qemu, 3000);
  if (vm.swtpm > 0) await stopDetached(vm.swtpm, 2000);
}
