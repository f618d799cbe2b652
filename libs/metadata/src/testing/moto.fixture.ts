import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { missingComponent } from '@asterism/testing';
import { closedLoopbackPort } from './loopback-server.fixture.js';

/** Where tools/scripts/setup.d/40-moto.sh installs moto. */
export function motoServerBinary(): string {
  return join(process.env.ASTERISM_MOTO_VENV ?? join(homedir(), '.cache', 'asterism', 'moto-venv'), 'bin', 'moto_server');
}

/** false when moto is installed; else the skip reason (throws under CI=true). */
export function motoUnavailable(): string | false {
  return existsSync(motoServerBinary()) ? false : missingComponent('moto_server', 'bash tools/scripts/setup.d/40-moto.sh');
}

/** A moto server (EC2, ELBv2, ... emulation) on a free loopback port. */
export class MotoServer {
  private proc: ChildProcess | undefined;
  url = '';

  async start(): Promise<string> {
    this.url = await closedLoopbackPort();
    const port = new URL(this.url).port;
    this.proc = spawn(motoServerBinary(), ['-H', '127.0.0.1', '-p', port], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    this.proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (this.proc.exitCode !== null) throw new Error(`moto_server exited: ${stderr}`);
      const ok = await fetch(`${this.url}/moto-api/`).then((r) => r.ok, () => false);
      if (ok) return this.url;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`moto_server did not answer within 30 s: ${stderr}`);
  }

  async stop(): Promise<void> {
    if (!this.proc || this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc!.once('exit', r));
    this.proc.kill('SIGTERM');
    await exited;
  }
}
