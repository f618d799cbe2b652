import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { swtpmInit } from '@asterism/tpm';
import { startDetached, type DetachedProcess } from './detached.js';
import type { ClusterLayout } from './layout.js';

const run = promisify(execFile);

/** Starts a node's swtpm (its "vTPM") on Unix sockets; state persists across reboots. */
export async function startSwtpm(layout: ClusterLayout, node: string): Promise<DetachedProcess> {
  await mkdir(layout.tpmDir(node), { recursive: true, mode: 0o700 });
  const p = startDetached('swtpm', 'swtpm', [
    'socket',
    '--tpm2',
    '--server', `type=unixio,path=${layout.tpmSocket(node)}`,
    '--ctrl', `type=unixio,path=${layout.tpmCtrlSocket(node)}`,
    '--tpmstate', `dir=${layout.tpmDir(node)}`,
    '--flags', 'not-need-init,startup-clear',
  ], layout.log(node, 'swtpm'));
  for (let i = 0; i < 200 && !existsSync(layout.tpmSocket(node)); i++) await new Promise((r) => setTimeout(r, 10));
  if (!existsSync(layout.tpmSocket(node))) throw new Error(`swtpm of ${node} did not create ${layout.tpmSocket(node)} (see ${layout.log(node, 'swtpm')})`);
  // The socket file appears before swtpm accepts on it (seen as ECONNREFUSED under load).
  await waitAccepting(layout.tpmSocket(node), 5000).catch((err: unknown) => {
    throw new Error(`swtpm of ${node} does not accept on ${layout.tpmSocket(node)}: ${(err as Error).message} (see ${layout.log(node, 'swtpm')})`);
  });
  return p;
}

/** Resolves once a Unix socket accepts a connection (closed at once), retrying until `timeoutMs`. */
async function waitAccepting(path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await new Promise<void>((resolve, reject) => {
        const sock = connect(path, () => {
          sock.destroy();
          resolve();
        });
        sock.once('error', reject);
      });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** A reboot of the node's vTPM: PCRs reset, keys and NV kept (swtpm CMD_INIT). */
export async function resetTpm(layout: ClusterLayout, node: string): Promise<void> {
  await swtpmInit({ path: layout.tpmCtrlSocket(node) });
}

/** The node's state disk: a LUKS2 image with a random initial passphrase (what the disk mapper sets up). */
export async function createStateDisk(layout: ClusterLayout, node: string): Promise<void> {
  const img = layout.diskImage(node);
  const key = layout.diskKey(node);
  await writeFile(key, randomBytes(32), { mode: 0o600 });
  await run('truncate', ['-s', '32M', img]);
  await run('cryptsetup', ['luksFormat', '--type', 'luks2', '--batch-mode', '--label', 'state', '--key-slot', '0', `--key-file=${key}`, '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', img]);
}

/** The node's SSH host key, as sshd-keygen creates it on first boot. */
export async function createHostKey(layout: ClusterLayout, node: string, under = 'var/run/state/ssh'): Promise<void> {
  const path = join(layout.nodeRoot(node), under, 'ssh_host_ed25519_key');
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `root@${node}`, '-f', path]);
}
