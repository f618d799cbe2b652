/**
 * What an upgrade step may change on a node and how it is put back (docs/adr/0042-upgrade-agent.md):
 * the kubelet, kubeadm and kubectl binaries, the static pod manifests and the kubelet's kubeadm
 * configuration. Before a step they are copied to the state disk (`/run/state/upgrade/backup`);
 * a failed step copies them back. A journal next to it records the step in progress, so an agent
 * that starts after a reboot mid-step restores the node first.
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Everything a step may change, as absolute node paths. */
export const SNAPSHOT_PATHS = {
  binaries: ['/run/state/bin/kubelet', '/run/state/bin/kubeadm', '/run/state/bin/kubectl'],
  files: ['/var/lib/kubelet/config.yaml', '/var/lib/kubelet/kubeadm-flags.env'],
  folders: ['/etc/kubernetes/manifests'],
} as const;

const UPGRADE_DIR = '/run/state/upgrade';

/** The step in progress (or finished) on this node. */
export interface Journal {
  target: string;
  step: 'apply' | 'node';
  phase: 'started' | 'done';
  startedAt: string;
}

/** Backup, restore and journal below the node's (re-based) paths. */
export class NodeSnapshot {
  constructor(private readonly resolve: (p: string) => string = (p) => p) {}

  private get dir(): string {
    return this.resolve(UPGRADE_DIR);
  }

  /** The journal, or undefined when no step ever ran here. */
  async journal(): Promise<Journal | undefined> {
    try {
      return JSON.parse(await readFile(join(this.dir, 'journal.json'), 'utf8')) as Journal;
    } catch {
      return undefined;
    }
  }

  /** Writes the journal atomically. */
  async record(j: Journal): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = join(this.dir, 'journal.json.tmp');
    await writeFile(tmp, JSON.stringify(j), { mode: 0o600 });
    await rename(tmp, join(this.dir, 'journal.json'));
  }

  /** Forgets the step (after a restore: the node is as before it). */
  async clearJournal(): Promise<void> {
    await rm(join(this.dir, 'journal.json'), { force: true });
  }

  /** Copies every existing snapshot path into a fresh backup folder. */
  async backup(): Promise<void> {
    const backup = join(this.dir, 'backup');
    await rm(backup, { recursive: true, force: true });
    for (const p of [...SNAPSHOT_PATHS.binaries, ...SNAPSHOT_PATHS.files, ...SNAPSHOT_PATHS.folders]) {
      await cp(this.resolve(p), join(backup, p), { recursive: true, preserveTimestamps: true }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
  }

  /** Puts the backup back (files replaced by rename, folders' contents replaced); returns the paths restored. */
  async restore(): Promise<string[]> {
    const backup = join(this.dir, 'backup');
    const restored: string[] = [];
    for (const p of [...SNAPSHOT_PATHS.binaries, ...SNAPSHOT_PATHS.files]) {
      const from = join(backup, p);
      const to = this.resolve(p);
      try {
        await mkdir(dirname(to), { recursive: true });
        await cp(from, `${to}.asterism-restore`, { preserveTimestamps: true });
        await rename(`${to}.asterism-restore`, to);
        restored.push(p);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    for (const p of SNAPSHOT_PATHS.folders) {
      const from = join(backup, p);
      const names = await readdir(from).catch(() => undefined);
      if (!names) continue;
      const to = this.resolve(p);
      for (const n of await readdir(to).catch(() => [] as string[])) if (!names.includes(n)) await rm(join(to, n), { recursive: true, force: true });
      for (const n of names) {
        // Staged beside the folder, not in it: the kubelet reads every file of the manifests folder.
        const staged = join(dirname(to), `.asterism-restore-${n}`);
        await cp(join(from, n), staged, { preserveTimestamps: true });
        await rename(staged, join(to, n));
      }
      restored.push(p);
    }
    return restored;
  }

  /** `sha256:<hex>` of a node file, or undefined when it does not exist. */
  async fileHash(path: string): Promise<string | undefined> {
    try {
      return `sha256:${createHash('sha256').update(await readFile(this.resolve(path))).digest('hex')}`;
    } catch {
      return undefined;
    }
  }

  /** The image of a static pod manifest (`kube-apiserver`), or undefined. */
  async staticPodImage(component: string): Promise<string | undefined> {
    const text = await readFile(this.resolve(`/etc/kubernetes/manifests/${component}.yaml`), 'utf8').catch(() => undefined);
    return text ? /^\s*(?:-\s+)?image:\s*(\S+)/m.exec(text)?.[1] : undefined;
  }
}
