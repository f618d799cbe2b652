/**
 * Local backend: a node whose bootstrapper has nothing else to supervise leaves its verification
 * service (docs/protocol/verification.md) to the verification-service program - what the chart's
 * DaemonSet pod is on a real node (docs/adr/0028) - and exits (docs/adr/0026-join-path-performance.md:
 * the program's resident set is about half of a bootstrapper's). The program opens the TPM per
 * document, so the bootstrapper closes its own TPM connection first (swtpm serves one at a time).
 * The program stays in the bootstrapper's process group: whoever stops the node stops it too.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Variant } from '@asterism/attestation';
import type { ReadinessProbe } from '@asterism/bootstrapper/runtime';
import type { Logger } from '@asterism/logger';

/** The node whose verification service is handed over: the bootstrapper's flags and the simulated node's ports. */
export interface HandOverNode {
  variant: Variant;
  tpm: string;
  stateRoot: string;
  initHost: string;
  verifyGrpcPort: number;
  verifyHttpPort: number;
  verbosity: number;
  logFile: string | undefined;
}

/** What {@link handOverVerification} needs of the node and of the program to start. */
export interface HandOverOptions {
  cfg: HandOverNode;
  /** `node <flags> <entry>` of the verification-service program. */
  command: { binary: string; args: string[] };
  probe: ReadinessProbe;
  logger: Logger;
  /** How long the program may take to listen. Default 30 s. */
  timeoutMs?: number;
}

/** The program's flags for this node: same variant, TPM, address and ports the bootstrapper would serve on. */
export function verificationProgramArgs(cfg: HandOverOptions['cfg']): string[] {
  return [
    `--attestation-variant=${cfg.variant.name}`,
    `--tpm=${cfg.tpm}`,
    `--state-root=${cfg.stateRoot}`,
    `--host=${cfg.initHost}`,
    `--grpc-port=${cfg.verifyGrpcPort}`,
    `--http-port=${cfg.verifyHttpPort}`,
    `-v=${cfg.verbosity}`,
  ];
}

/**
 * Starts the verification-service program and waits until its gRPC port accepts connections.
 * Resolves with its pid once it serves (the caller may exit); with undefined when the port was
 * taken already, or the program exited or did not listen in time (it is then killed, and the
 * caller serves the verification service itself).
 */
export async function handOverVerification(o: HandOverOptions): Promise<{ pid: number } | undefined> {
  const { cfg, logger } = o;
  const endpoint = `${cfg.initHost.includes(':') ? `[${cfg.initHost}]` : cfg.initHost}:${cfg.verifyGrpcPort}`;
  // Something listening already would answer the readiness probe for a program that cannot bind.
  if (await o.probe.reachable(endpoint)) {
    logger.warn('not starting the verification-service program: its port is in use', { endpoint });
    return undefined;
  }
  // Its log goes next to the bootstrapper's; the child must not hold the bootstrapper's pipes open.
  const out = cfg.logFile ? openSync(join(dirname(cfg.logFile), 'verification-service.log'), 'a', 0o600) : 'ignore';
  const child = spawn(o.command.binary, [...o.command.args, ...verificationProgramArgs(cfg)], { stdio: ['ignore', out, out] });
  if (typeof out === 'number') closeSync(out);
  let exited = false;
  child.once('exit', () => (exited = true));
  child.once('error', () => (exited = true));
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  while (!exited && Date.now() < deadline) {
    if (await o.probe.reachable(endpoint)) {
      child.unref();
      logger.info('verification service handed to the verification-service program', { pid: child.pid, endpoint });
      return { pid: child.pid! };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  logger.warn('verification-service program did not start serving', { endpoint, exited, exitCode: child.exitCode });
  child.kill('SIGKILL');
  return undefined;
}
