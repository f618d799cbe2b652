/**
 * containerd's image store through its `ctr` client, on the node's containerd socket, in the
 * namespace the CRI plugin (and so the kubelet) uses: `k8s.io` (docs/protocol/components.md).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What the component installer needs from the container runtime (declared by its consumer). */
export interface ImageStore {
  /** The manifest digest `ref` resolves to (`sha256:<hex>`), or undefined when there is no such image. */
  digestOf(ref: string): Promise<string | undefined>;
  /** Imports every image of an OCI archive under the names its index gives. */
  importArchive(file: string): Promise<void>;
  /** Gives the image `ref` resolves to a second name (e.g. `<repository>@<digest>`). */
  tag(ref: string, name: string): Promise<void>;
  /** Removes the name `ref` (its content is collected by containerd). */
  remove(ref: string): Promise<void>;
}

/** Options of {@link CtrImageStore}. */
export interface CtrImageStoreOptions {
  /** containerd's socket (default /run/containerd/containerd.sock). */
  address?: string;
  /** containerd namespace (default `k8s.io`, the CRI plugin's). */
  namespace?: string;
  ctr?: string;
  /** Time limit of one import (default 5 min). */
  importTimeoutMs?: number;
}

/** {@link ImageStore} over `ctr`. */
export class CtrImageStore implements ImageStore {
  private readonly base: string[];
  private readonly ctr: string;
  private readonly importTimeoutMs: number;

  constructor(o: CtrImageStoreOptions = {}) {
    this.base = ['--address', o.address ?? '/run/containerd/containerd.sock', '--namespace', o.namespace ?? 'k8s.io'];
    this.ctr = o.ctr ?? 'ctr';
    this.importTimeoutMs = o.importTimeoutMs ?? 5 * 60_000;
  }

  async digestOf(ref: string): Promise<string | undefined> {
    const { stdout } = await run(this.ctr, [...this.base, 'images', 'ls'], { timeout: 60_000, maxBuffer: 16 << 20 });
    return parseImageList(stdout).get(ref);
  }

  async importArchive(file: string): Promise<void> {
    await run(this.ctr, [...this.base, 'images', 'import', '--all-platforms', file], { timeout: this.importTimeoutMs, maxBuffer: 16 << 20 });
  }

  async tag(ref: string, name: string): Promise<void> {
    await run(this.ctr, [...this.base, 'images', 'tag', '--force', ref, name], { timeout: 60_000 });
  }

  async remove(ref: string): Promise<void> {
    await run(this.ctr, [...this.base, 'images', 'rm', ref], { timeout: 60_000 });
  }
}

/** `ctr images ls` output (REF TYPE DIGEST ...) as reference -> manifest digest. */
export function parseImageList(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n').slice(1)) {
    const [ref, , digest] = line.trim().split(/\s+/);
    if (ref && digest?.startsWith('sha256:')) out.set(ref, digest);
  }
  return out;
}
