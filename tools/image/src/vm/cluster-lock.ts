/**
 * The machine-wide lock every user of network namespaces on the project's machines takes
 * (`flock /tmp/asterism-cluster.lock`): held by a `flock` child process (in its own process group
 * with the command it runs) for as long as a test VM has a network.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** Path of the shared lock file. */
export const CLUSTER_LOCK = '/tmp/asterism-cluster.lock';

/** A held lock; `release()` ends the holder process. */
export class ClusterLock {
  private constructor(private readonly holder: ChildProcess) {}

  /** Waits (up to `timeoutMs`) until the lock is ours. */
  static async acquire(timeoutMs: number, path = CLUSTER_LOCK): Promise<ClusterLock> {
    const holder = spawn('flock', [path, 'sh', '-c', 'echo locked; exec sleep 86400'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    const got = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      holder.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('locked')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      holder.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    const lock = new ClusterLock(holder);
    if (!got) {
      lock.release();
      throw new Error(`could not take ${path} within ${timeoutMs} ms`);
    }
    process.once('exit', () => lock.release());
    return lock;
  }

  /** Lets the next user in: ends flock and the command holding the lock (the whole group). */
  release(): void {
    try {
      if (this.holder.pid) process.kill(-this.holder.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
