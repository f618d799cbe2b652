import { readFile, stat } from 'node:fs/promises';

/**
 * A value parsed from a file and kept until the file changes: the file is stat()ed at most once
 * per `recheckMs` and re-read only when its inode, size or mtime differ (a ConfigMap mount swaps
 * a symlink, which changes the inode). Read errors are not cached: the next call tries again.
 */
export class ReloadingFile<T> {
  #loaded: { key: string; value: T } | undefined;
  #check: Promise<T> | undefined;
  #checkedAt = -Infinity;

  constructor(
    private readonly path: string,
    private readonly parse: (text: string) => T,
    private readonly recheckMs = 1000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The parsed value of the file's current content. */
  get(): Promise<T> {
    const t = this.now();
    if (this.#check && t - this.#checkedAt < this.recheckMs) return this.#check;
    this.#checkedAt = t;
    const check = this.#load();
    this.#check = check;
    check.catch(() => {
      if (this.#check === check) this.#check = undefined;
    });
    return check;
  }

  async #load(): Promise<T> {
    const st = await stat(this.path);
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    if (this.#loaded?.key === key) return this.#loaded.value;
    const value = this.parse(await readFile(this.path, 'utf8'));
    this.#loaded = { key, value };
    return value;
  }
}
