/**
 * The upgrade agent of a kubeadm node (docs/adr/0042-upgrade-agent.md): the bootstrapper, started
 * with `--upgrade-agent-port`, stays resident after bootstrapping and serves upgradeagent.API over
 * aTLS on the node's address. Its attestation documents are issued over a TPM connection of their
 * own per handshake (swtpm serves one connection; the verification service's pod needs it too).
 * On start it restores the node when a step was interrupted (reboot or crash mid-step).
 */
import { atlsServerCredentials } from '@asterism/atls';
import type { Issuer } from '@asterism/attestation';
import { runCommand } from '@asterism/child-process';
import type { Logger } from '@asterism/logger';
import { nodePlatformFor, releaseAttestationKeys } from '@asterism/node-platform';
import type { ComponentInstaller } from '../components/index.js';
import type { BootstrapperConfig } from '../flags.js';
import { failureSummary } from '../kubernetes/kubeadm/kubeadm-backend.js';
import { KUBEADM } from '../kubernetes/kubeadm/configs.js';
import { kubernetesCa, UpgradeAgentServer } from './agent-server.js';
import { NodeKubelet } from './kubelet-control.js';
import { NodeSnapshot } from './node-snapshot.js';
import { recoverInterruptedStep, runUpgradeStep, type StepDeps } from './upgrade-step.js';

/** What the agent is built from. */
export interface AgentContext {
  cfg: BootstrapperConfig;
  logger: Logger;
  resolve: (p: string) => string;
  installer: ComponentInstaller;
  kubeadmPath: string;
}

/** Starts the agent on `--upgrade-agent-port`; resolves with what stops it. */
export async function startUpgradeAgent(ctx: AgentContext): Promise<{ port: number; stop: () => Promise<void> }> {
  const { cfg, logger } = ctx;
  const deps: StepDeps = {
    install: (list, signal) => ctx.installer.install(list, signal),
    kubeadm: async (args, signal) => {
      logger.info('running kubeadm', { args });
      const r = await runCommand(ctx.kubeadmPath, args, { ...(signal ? { signal } : {}), timeoutMs: 15 * 60_000 });
      if (r.code !== 0) throw new Error(`kubeadm ${args.slice(0, 2).join(' ')} exited ${r.code}: ${failureSummary(r.stderr)}`);
    },
    kubelet: new NodeKubelet({ initSystem: cfg.initSystem }),
    snapshot: new NodeSnapshot(ctx.resolve),
    logger,
    ignorePreflightErrors: cfg.ignorePreflightErrors,
    patchesDir: ctx.resolve(KUBEADM.patchesDir),
  };
  if (await recoverInterruptedStep(deps).catch((err: unknown) => (logger.error('restoring after an interrupted upgrade step failed', { err }), false))) {
    logger.info('node restored after an interrupted upgrade step');
  }
  const server = new UpgradeAgentServer({ logger, run: (req, signal) => runUpgradeStep(deps, req, signal), caPem: kubernetesCa(ctx.resolve) });
  const credentials = atlsServerCredentials({ issuer: perHandshakeIssuer(cfg, logger), logger });
  const host = cfg.addresses?.[0] ?? cfg.initHost;
  const port = await server.listen(`${host.includes(':') ? `[${host}]` : host}:${cfg.upgradeAgentPort}`, credentials);
  logger.info('upgrade agent serving', { address: host, port });
  return { port, stop: () => server.stop() };
}

/** An issuer that opens the node's platform for each document and releases it right after, one at a time. */
function perHandshakeIssuer(cfg: BootstrapperConfig, logger: Logger): Issuer {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    variant: cfg.variant,
    issue(userData, nonce, signal) {
      const run = async () => {
        const platform = nodePlatformFor(cfg, (count) => logger.warn('flushed transient TPM objects left by another TPM user', { count }));
        try {
          return await platform.issuer.issue(userData, nonce, signal);
        } finally {
          await releaseAttestationKeys(platform.issuer);
          await platform.close();
        }
      };
      const result = queue.then(run, run);
      queue = result.catch(() => undefined);
      return result;
    },
  };
}
