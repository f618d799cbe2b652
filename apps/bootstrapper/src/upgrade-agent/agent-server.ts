/**
 * upgradeagent.API on a node (proto/upgrade/upgrade.proto, docs/adr/0042-upgrade-agent.md):
 * served over aTLS (the node attests to the caller); Challenge hands out a single-use nonce, and
 * Upgrade runs one step for a caller that signed the request with the cluster's admin
 * certificate (./caller-auth.ts). One step at a time; the request is validated completely before
 * anything happens. A failed step is an outcome in the response; refusals are typed gRPC errors.
 */
import { readFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import { upgradeagent } from '@asterism/proto';
import { GrpcServer, toStatus } from '@asterism/service-runtime';
import { parseKubeVersion } from '@asterism/versions';
import { authenticateCaller, CallerAuthError, NonceBook } from './caller-auth.js';
import type { StepRequest, StepResult } from './upgrade-step.js';

/** Default port of the upgrade agent (docs/protocol/upgrade.md). */
export const UPGRADE_AGENT_PORT = 9777;

/** Refusals before any step runs. */
export class UpgradeAgentError extends AsterismError<'INVALID_REQUEST' | 'UPGRADE_IN_PROGRESS'> {}

const STATUS: Record<string, grpc.status> = {
  INVALID_REQUEST: grpc.status.INVALID_ARGUMENT,
  UPGRADE_IN_PROGRESS: grpc.status.FAILED_PRECONDITION,
  CALLER_NOT_AUTHENTICATED: grpc.status.UNAUTHENTICATED,
  CALLER_NOT_ADMIN: grpc.status.PERMISSION_DENIED,
};

/** What the server runs a step with. */
export type StepRunner = (req: StepRequest, signal: AbortSignal) => Promise<StepResult>;

/** Options of {@link UpgradeAgentServer}. */
export interface UpgradeAgentServerOptions {
  logger: Logger;
  run: StepRunner;
  /** The cluster's Kubernetes CA certificate (PEM), read per call (it appears once kubeadm wrote it). */
  caPem: () => Promise<string>;
  nonces?: NonceBook;
}

/** The agent's gRPC server. */
export class UpgradeAgentServer {
  readonly #shape: GrpcServer;
  readonly #nonces: NonceBook;
  #busy = false;

  constructor(private readonly o: UpgradeAgentServerOptions) {
    this.#nonces = o.nonces ?? new NonceBook();
    this.#shape = new GrpcServer({ logger: o.logger });
    this.#shape.server.addService(upgradeagent.APIService, {
      challenge: (_call: grpc.ServerUnaryCall<upgradeagent.ChallengeRequest, upgradeagent.ChallengeResponse>, done: grpc.sendUnaryData<upgradeagent.ChallengeResponse>) => done(null, { nonce: this.#nonces.issue() }),
      upgrade: (call: grpc.ServerUnaryCall<upgradeagent.UpgradeRequest, upgradeagent.UpgradeResponse>, done: grpc.sendUnaryData<upgradeagent.UpgradeResponse>) => {
        // A step runs to its end even when the caller goes away (a killed CLI): stopping kubeadm
        // halfway would leave the node between versions. A re-run finds it done (or waits for it).
        this.upgrade(call.request, new AbortController().signal).then(
          (r) => done(null, r),
          (err: unknown) => {
            const status = toStatus(err, STATUS, { revealInternal: true });
            if (status.internal) o.logger.error('upgrade call failed', { err });
            done(status);
          },
        );
      },
    });
  }

  /** Binds `address` (`host:port`); resolves with the bound port. */
  listen(address: string, credentials: grpc.ServerCredentials): Promise<number> {
    return this.#shape.bind(address, credentials);
  }

  stop(): Promise<void> {
    return this.#shape.stop(5000);
  }

  private async upgrade(req: upgradeagent.UpgradeRequest, signal: AbortSignal): Promise<upgradeagent.UpgradeResponse> {
    const step = parseRequest(req);
    const caller = authenticateCaller(req, this.#nonces, await this.o.caPem().catch((err: unknown) => {
      throw new CallerAuthError('CALLER_NOT_AUTHENTICATED', `this node has no Kubernetes CA to check the caller against: ${(err as Error).message}`);
    }));
    if (this.#busy) throw new UpgradeAgentError('UPGRADE_IN_PROGRESS', 'another upgrade step is running on this node');
    this.#busy = true;
    const started = Date.now();
    try {
      this.o.logger.info('upgrade step requested', { step: step.step, target: step.target, caller });
      const r = await this.o.run(step, signal);
      const base = { failedStep: '', errorCode: '', errorMessage: '', rolledBack: false, durationMs: Date.now() - started };
      return r.outcome === 'failed' ? { ...base, outcome: r.outcome, failedStep: r.failedStep, errorCode: r.code, errorMessage: r.message, rolledBack: r.rolledBack } : { ...base, outcome: r.outcome };
    } finally {
      this.#busy = false;
    }
  }
}

/** The step a request asks for, validated completely (version, step, components) before anything runs. */
export function parseRequest(req: upgradeagent.UpgradeRequest): StepRequest {
  const bad = (m: string) => new UpgradeAgentError('INVALID_REQUEST', m);
  try {
    parseKubeVersion(req.kubernetesVersion);
  } catch {
    throw bad(`kubernetes_version "${req.kubernetesVersion}" is not a version like v1.35.4`);
  }
  const step = req.step === upgradeagent.Step.STEP_IMAGES ? 'images' : req.step === upgradeagent.Step.STEP_APPLY ? 'apply' : req.step === upgradeagent.Step.STEP_NODE ? 'node' : undefined;
  if (!step) throw bad(`step ${req.step} is not images, apply or node`);
  if (req.components.length === 0) throw bad('the request lists no components');
  for (const [i, c] of req.components.entries()) {
    if (!/^sha256:[0-9a-f]{64}$/.test(c.hash)) throw bad(`components[${i}] has no sha256 hash`);
    if (!c.installPath.startsWith('/')) throw bad(`components[${i}] has no absolute install path`);
  }
  return { target: req.kubernetesVersion, step, components: req.components.map((c) => ({ url: c.url, hash: c.hash, installPath: c.installPath, extract: c.extract })) };
}

/** Reads the CA a kubeadm node keeps (`/etc/kubernetes/pki/ca.crt`, re-based by `resolve`). */
export const kubernetesCa = (resolve: (p: string) => string) => () => readFile(resolve('/etc/kubernetes/pki/ca.crt'), 'utf8');
