/**
 * A private network for one test VM (docs/protocol/node-image.md "Interfaces"): a network
 * namespace with a bridge at 10.42.0.1/24 (the QEMU metadata API's address), a tap device for
 * QEMU on it, and busybox udhcpd leasing 10.42.0.10 to the VM. Nothing is routed out of the
 * namespace; `remove()` deletes it (and with it the bridge, the tap and the DHCP server).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCaptured } from '@asterism/testing';

/** Host side of the VM network (bridge address; also the default metadata API host). */
export const BRIDGE_ADDRESS = '10.42.0.1';
/** The address the VM is leased. */
export const VM_ADDRESS = '10.42.0.10';

async function ip(args: string[]): Promise<void> {
  const r = await runCaptured('ip', args, { timeoutMs: 20_000 });
  if (r.code !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

/** Deletes namespaces `<prefix>-<pid>` whose process is gone. */
async function removeStale(name: string): Promise<void> {
  const prefix = name.replace(/-\d+$/, '-');
  const list = await runCaptured('ip', ['netns', 'list'], { timeoutMs: 20_000 });
  for (const ns of list.stdout.split('\n').map((l) => l.split(' ')[0] ?? '')) {
    const pid = ns.startsWith(prefix) ? Number(ns.slice(prefix.length)) : NaN;
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) await runCaptured('ip', ['netns', 'del', ns], { timeoutMs: 20_000 });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The namespace, its tap device and DHCP server. */
export class VmNetwork {
  private dhcp: ChildProcess | undefined;

  private constructor(
    /** Network namespace name. */
    readonly namespace: string,
    /** Tap device QEMU attaches to. */
    readonly tap: string,
  ) {}

  /**
   * Creates the namespace, bridge, tap and DHCP server; `dir` holds the DHCP config and leases.
   * `name` should end in `-<pid>` of the creating process: namespaces of dead processes with the
   * same prefix are removed first (a test that was killed leaves no network behind for long).
   */
  static async create(name: string, dir: string): Promise<VmNetwork> {
    const net = new VmNetwork(name, 'tap0');
    await removeStale(name);
    await runCaptured('ip', ['netns', 'del', name]);
    await ip(['netns', 'add', name]);
    try {
      const inNs = (args: string[]) => ip(['-n', name, ...args]);
      await inNs(['link', 'set', 'lo', 'up']);
      await inNs(['link', 'add', 'br0', 'type', 'bridge']);
      await inNs(['addr', 'add', `${BRIDGE_ADDRESS}/24`, 'dev', 'br0']);
      await inNs(['link', 'set', 'br0', 'up']);
      await inNs(['tuntap', 'add', 'dev', net.tap, 'mode', 'tap']);
      await inNs(['link', 'set', net.tap, 'master', 'br0']);
      await inNs(['link', 'set', net.tap, 'up']);
      net.startDhcp(dir);
    } catch (err) {
      await net.remove();
      throw err;
    }
    return net;
  }

  private startDhcp(dir: string): void {
    const conf = join(dir, 'udhcpd.conf');
    writeFileSync(conf, [`start ${VM_ADDRESS}`, `end ${VM_ADDRESS}`, 'interface br0', `lease_file ${join(dir, 'udhcpd.leases')}`, 'opt subnet 255.255.255.0', `opt router ${BRIDGE_ADDRESS}`, 'opt lease 3600', ''].join('\n'));
    writeFileSync(join(dir, 'udhcpd.leases'), '');
    this.dhcp = spawn('ip', ['netns', 'exec', this.namespace, 'busybox', 'udhcpd', '-f', '-a', '100', conf], { stdio: 'ignore' });
  }

  /** Command prefix that runs a program inside the namespace. */
  exec(command: string, args: string[]): [string, string[]] {
    return ['ip', ['netns', 'exec', this.namespace, command, ...args]];
  }

  /** Stops the DHCP server and deletes the namespace with its devices. */
  async remove(): Promise<void> {
    this.dhcp?.kill('SIGTERM');
    this.dhcp = undefined;
    await runCaptured('ip', ['netns', 'del', this.namespace], { timeoutMs: 20_000 });
  }
}
