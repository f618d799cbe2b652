/**
 * A booted node image with everything it expects around it (docs/protocol/node-image.md
 * "Interfaces"): a private network namespace with DHCP, the QEMU metadata API on the bridge
 * address naming the VM a worker, a blank state disk, and the VM itself. For the acceptance tests and manual runs;
 * `stop()` removes the VM, the vTPM, the metadata server and the namespace.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { ClusterLock } from './cluster-lock.js';
import { Vm } from './vm.js';
import { BRIDGE_ADDRESS, VM_ADDRESS, VmNetwork } from './vm-network.js';

/** Default size of a test node's state disk (LUKS2 needs 16 MiB for its header); `ASTERISM_TEST_STATE_DISK_MIB` overrides it (boot-time probes of a worker-sized disk). */
const STATE_DISK_BYTES = Number(process.env['ASTERISM_TEST_STATE_DISK_MIB'] ?? 64) * 1024 * 1024;
/** The metadata API port (the bootstrapper's default --metadata is http://10.42.0.1:8080). */
export const METADATA_PORT = 8080;
const TSX = join(WORKSPACE_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');

/** A VM of the node image on its own network. */
export class TestNode {
  private constructor(
    readonly network: VmNetwork,
    private current: Vm,
    private readonly metadata: ChildProcess,
    private readonly lock: ClusterLock,
    /** The raw state disk file attached to the VM (read from the host by the state-disk test). */
    readonly stateDisk: string,
    private readonly image: string,
    private readonly dir: string,
  ) {}

  /** The VM of the current boot. */
  get vm(): Vm {
    return this.current;
  }

  /**
   * Takes the cluster lock, creates the network and metadata API, then boots `image`; `dir` keeps
   * the logs. `initSecret`: the secret whose hash the metadata API serves (default: a random one
   * nobody keeps, so the node is never initialised).
   */
  static async start(image: string, dir: string, namespace: string, lockTimeoutMs = 30 * 60_000, initSecret = randomBytes(24).toString('base64')): Promise<TestNode> {
    const lock = await ClusterLock.acquire(lockTimeoutMs);
    let network: VmNetwork;
    try {
      network = await VmNetwork.create(namespace, dir);
    } catch (err) {
      lock.release();
      throw err;
    }
    let metadata: ChildProcess | undefined;
    try {
      const instances = join(dir, 'instances.json');
      writeFileSync(instances, JSON.stringify([{ Name: 'worker-0', ProviderID: 'qemu:///hostname/worker-0', Role: 'Worker', VPCIP: VM_ADDRESS, SecondaryIPRange: '', AliasIPRanges: null }]));
      writeFileSync(join(dir, 'initsecrethash'), bcrypt.hashSync(initSecret, 4));
      const [cmd, args] = network.exec(process.execPath, ['--import', TSX, join(import.meta.dirname, 'metadata-server.ts'), BRIDGE_ADDRESS, String(METADATA_PORT), instances, join(dir, 'initsecrethash')]);
      metadata = spawn(cmd, args, { stdio: 'ignore', cwd: WORKSPACE_ROOT });
      // A blank sparse state disk: the image gives it a LUKS2 header on first boot.
      const stateDisk = join(dir, 'state.raw');
      writeFileSync(stateDisk, '');
      truncateSync(stateDisk, STATE_DISK_BYTES);
      const vm = await Vm.boot({ image, dir, network, stateDisk });
      return new TestNode(network, vm, metadata, lock, stateDisk, image, dir);
    } catch (err) {
      metadata?.kill('SIGTERM');
      await network.remove();
      lock.release();
      throw err;
    }
  }

  /** Runs a program inside the VM's network namespace (the only place the VM is reachable). */
  execArgs(command: string, args: string[]): [string, string[]] {
    return this.network.exec(command, args);
  }

  /**
   * After the guest rebooted (QEMU runs with -no-reboot, so it exited): boots the same image with
   * the same state disk, vTPM state and network again. The earlier console is kept as console-<n>.log.
   */
  async bootAgain(): Promise<Vm> {
    await this.current.stop();
    renameSync(join(this.dir, 'console.log'), join(this.dir, `console-${Date.now()}.log`));
    this.current = await Vm.boot({ image: this.image, dir: this.dir, network: this.network, stateDisk: this.stateDisk });
    return this.current;
  }

  /** Stops the VM, its vTPM and the metadata API, and deletes the network namespace. */
  async stop(): Promise<void> {
    await this.current.stop();
    this.metadata.kill('SIGTERM');
    await this.network.remove();
    this.lock.release();
  }
}
