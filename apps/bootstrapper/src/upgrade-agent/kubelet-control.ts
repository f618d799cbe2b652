/**
 * Restarting this node's kubelet after its binary or configuration changed, and waiting until it
 * is healthy (docs/adr/0042-upgrade-agent.md). With systemd: `systemctl restart kubelet`. With an
 * external supervisor (`--init-system none`, tools/local-cluster's node.sh, which starts the
 * kubelet again a second after it exits): the kubelet processes of this process's own cgroup are
 * stopped, never another node's.
 */
import { readdir, readFile } from 'node:fs/promises';
import { runCommand } from '@asterism/child-process';

/** The kubelet as an upgrade step drives it. */
export interface KubeletControl {
  restart(): Promise<void>;
  /** Resolves once the kubelet's health endpoint answers ok; rejects after `timeoutMs`. */
  waitHealthy(timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

/** Options of {@link NodeKubelet}. */
export interface NodeKubeletOptions {
  initSystem: 'systemd' | 'none';
  /** The kubelet's healthz endpoint (default its default, http://127.0.0.1:10248/healthz). */
  healthz?: string;
}

/** The kubelet of this node. */
export class NodeKubelet implements KubeletControl {
  constructor(private readonly o: NodeKubeletOptions) {}

  async restart(): Promise<void> {
    if (this.o.initSystem === 'systemd') {
      const r = await runCommand('systemctl', ['restart', 'kubelet'], { timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`systemctl restart kubelet exited with ${r.code}: ${r.stderr.trim()}`);
      return;
    }
    const pids = await kubeletsOfThisCgroup();
    for (const pid of pids) process.kill(pid, 'SIGTERM');
    // Gone before the supervisor starts the new one (it waits a second after an exit).
    const deadline = Date.now() + 30_000;
    while ((await kubeletsOfThisCgroup()).some((p) => pids.includes(p)) && Date.now() < deadline) await sleep(100);
  }

  async waitHealthy(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const url = this.o.healthz ?? 'http://127.0.0.1:10248/healthz';
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer';
    for (;;) {
      signal?.throwIfAborted();
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
        if (res.ok) return;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`the kubelet is not healthy after ${timeoutMs / 1000} s (${url}: ${last})`);
      await sleep(500);
    }
  }
}

/** Pids of processes named kubelet in the same cgroups as this process. */
async function kubeletsOfThisCgroup(): Promise<number[]> {
  const mine = await readFile('/proc/self/cgroup', 'utf8');
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await readFile(`/proc/${entry}/comm`, 'utf8')).trim() !== 'kubelet') continue;
      if ((await readFile(`/proc/${entry}/cgroup`, 'utf8')) === mine) pids.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return pids;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
