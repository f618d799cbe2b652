import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '@asterism/logger';

/**
 * Watches a config file that may live in a Kubernetes ConfigMap volume, where an update swaps the
 * `..data` symlink (the file itself is never written in place). We watch the directory, debounce
 * bursts of events, and call `onChange` only when the file's content actually changed.
 */
export class ConfigWatcher {
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #last: string | undefined;
  #running: Promise<void> = Promise.resolve();
  #poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly onChange: () => Promise<unknown>,
    private readonly logger: Logger,
    private readonly debounceMs = 100,
    /** Safety net for filesystems without inotify events (0 = off). */
    private readonly pollMs = 5_000,
  ) {}

  /** Starts watching; the current content is the baseline. */
  async start(): Promise<void> {
    this.#last = await this.read();
    const name = basename(this.path);
    this.#watcher = watch(dirname(this.path), (_event, file) => {
      // ConfigMap volumes change `..data` and friends, not the file name: react to everything.
      if (file === null || file === name || String(file).startsWith('..')) this.schedule();
    });
    this.#watcher.on('error', (err) => this.logger.error('config watcher failed', { path: this.path, err }));
    if (this.pollMs > 0) {
      this.#poll = setInterval(() => this.schedule(), this.pollMs);
      this.#poll.unref();
    }
  }

  private schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#running = this.#running.then(() => this.check());
    }, this.debounceMs);
    this.#timer.unref();
  }

  private async read(): Promise<string | undefined> {
    try {
      return await readFile(this.path, 'utf8');
    } catch {
      return undefined;
    }
  }

  private async check(): Promise<void> {
    const now = await this.read();
    if (now === undefined || now === this.#last) return;
    this.#last = now;
    try {
      await this.onChange();
    } catch (err) {
      this.logger.error('config change handler failed', { path: this.path, err });
    }
  }

  /** Waits for any scheduled check to finish (tests). */
  async settle(): Promise<void> {
    await new Promise((r) => setTimeout(r, this.debounceMs + 20));
    await this.#running;
  }

  stop(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#poll);
    this.#watcher?.close();
  }
}
