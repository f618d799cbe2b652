import { MEASUREMENT_SECRET_KEY_ID, SSH_CA_KEY_SUFFIX, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import { isAsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import type { components, join } from '@asterism/proto';
import { RpcError } from '@asterism/service-runtime';
import { JoinError, OutboundCallError } from './errors.js';
import type {
  CertSansSource,
  ComponentsSource,
  ControlPlaneFiles,
  DataKeySource,
  JoiningNodeRecorder,
  JoinToken,
  JoinTokenSource,
  KubeletCertSigner,
  SshHostCertSigner,
} from './ports.js';
import type { ResolvedPeer } from '../identity/peer-identity.js';
import type { TicketCheck } from './admission.js';
import type { JoinRequest, RejoinRequest } from './request-validation.js';

/** Lifetime of the bootstrap tokens in join tickets (docs/protocol/constants.md). */
export const JOIN_TOKEN_TTL_MS = 15 * 60 * 1000;

/** Everything the ticket issuer is built from. */
export interface TicketIssuerDeps {
  keys: DataKeySource;
  tokens: JoinTokenSource;
  components: ComponentsSource;
  kubeletCa: KubeletCertSigner;
  controlPlaneFiles: ControlPlaneFiles;
  joiningNodes: JoiningNodeRecorder;
  certSans: CertSansSource;
  sshCa: SshHostCertSigner;
  /** The measurement salt from `join-config` (raw bytes). */
  measurementSalt: Buffer;
  logger: Logger;
  /**
   * Admission checks run in order before any step (ticket/admission.ts): strict identity binding
   * (docs/adr/0008) when on; none = `--identity-binding=off` (the reference's behaviour).
   */
  admission?: readonly TicketCheck[];
  /** Deadline of each outbound call of a ticket (keyservice, Kubernetes API, signers). Default 10 s. */
  outboundTimeoutMs?: number;
}

/** Default deadline of one outbound call: a join waits at most a few of these, not forever. */
export const OUTBOUND_TIMEOUT_MS = 10_000;

/** Per-request context, built once at the boundary: the resolved peer, a join id for logs, the call's cancellation. */
export interface TicketContext {
  peer: ResolvedPeer;
  joinId: string;
  signal?: AbortSignal;
}

/** The parts of a join ticket by name, each from its own step. */
export interface JoinTicketParts {
  measurementSecret: Buffer;
  stateDiskKey: Buffer;
  ssh: { caPublicKey: Buffer; certificate: Buffer };
  token: JoinToken;
  componentsReference: string;
  components: components.Component[];
  kubeletCert: Buffer;
  controlPlaneFiles: Array<{ name: string; data: Buffer }>;
}

/** Awaits named promises together (concurrently, first rejection wins) into an object of their values. */
async function allNamed<T extends object>(steps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const names = Object.keys(steps) as Array<keyof T>;
  const values = await Promise.all(names.map((n) => steps[n]));
  return Object.fromEntries(names.map((n, i) => [n, values[i]])) as T;
}

/** Statuses of a called service that mean "not reachable now": the step's (UNAVAILABLE) code. */
const UNREACHABLE: ReadonlySet<string> = new Set(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'CANCELLED']);

/** Tags an error from one step with a code and lower-case context, keeping JoinErrors as they are. */
function step(code: 'KEYSERVICE_UNAVAILABLE' | 'KUBERNETES_UNAVAILABLE' | 'INTERNAL', context: string) {
  return (err: unknown): never => {
    if (err instanceof JoinError) throw err;
    if (isAsterismError(err, 'CONTROL_PLANE_JOIN_IN_PROGRESS')) {
      throw new JoinError('CONTROL_PLANE_JOIN_IN_PROGRESS', `${context}: ${err.message}`, { cause: err });
    }
    const text = err instanceof Error ? err.message : String(err);
    // The apiserver refusing an object built from the request is the request's fault; the apiserver
    // refusing our credentials, or the keyservice refusing a key request we built from a validated
    // request, is ours. None gets better by retrying, so none is UNAVAILABLE.
    if (isAsterismError(err, 'K8S_INVALID', 'NODE_NAME_INVALID')) throw new JoinError('INVALID_REQUEST', `${context}: ${text}`, { cause: err });
    if (isAsterismError(err, 'K8S_FORBIDDEN', 'K8S_CONFIG_INVALID')) throw new JoinError('INTERNAL', `${context}: ${text}`, { cause: err });
    // A status from a service we call (the keyservice): only "not reachable now" is worth a retry.
    if (err instanceof RpcError && !UNREACHABLE.has(err.code)) throw new JoinError('INTERNAL', `${context}: ${text}`, { cause: err });
    throw new JoinError(code, `${context}: ${text}`, { cause: err });
  };
}

/**
 * Issues join and rejoin tickets (docs/protocol/join-ticket.md). Requests are validated completely before
 * any key is fetched; then independent steps run concurrently.
 */
export class TicketIssuer {
  constructor(private readonly deps: TicketIssuerDeps) {}

  /**
   * Runs one outbound call under its own deadline and the request's signal. A frozen keyservice or
   * apiserver used to hold a join handler forever; now the call fails with the step's code
   * (UNAVAILABLE for the keyservice and Kubernetes: retrying later may work). The abandoned promise
   * is left to settle on its own; `run` gets a signal so callees that can cancel do.
   */
  #out<T>(code: 'KEYSERVICE_UNAVAILABLE' | 'KUBERNETES_UNAVAILABLE' | 'INTERNAL', context: string, ctx: TicketContext, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const timeoutMs = this.deps.outboundTimeoutMs ?? OUTBOUND_TIMEOUT_MS;
    const local = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let onCancel = (): void => undefined;
    const stopped = new Promise<never>((_, reject) => {
      // A ref'd timer (unlike AbortSignal.timeout): the deadline must fire even in an idle process.
      timer = setTimeout(() => {
        local.abort();
        reject(new OutboundCallError('NO_ANSWER', `no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      onCancel = () => {
        local.abort();
        reject(new OutboundCallError('CANCELLED_BY_CLIENT', 'request cancelled by the client'));
      };
      if (ctx.signal?.aborted) onCancel();
      else ctx.signal?.addEventListener('abort', onCancel, { once: true });
    });
    return Promise.race([run(local.signal), stopped])
      .catch(step(code, context))
      .finally(() => {
        clearTimeout(timer);
        ctx.signal?.removeEventListener('abort', onCancel);
      });
  }

  /**
   * IssueJoinTicket for a parsed request and a resolved peer: admission checks, then the
   * independent steps concurrently ({@link #gather}); the JoiningNode record, the only step that
   * must not happen for a failed ticket, runs last once everything else succeeded.
   */
  async issueJoinTicket(req: JoinRequest, ctx: TicketContext): Promise<join.IssueJoinTicketResponse> {
    const log = this.deps.logger.child({ joinId: ctx.joinId });
    log.info('issuing join ticket', { nodeName: req.nodeName, isControlPlane: req.isControlPlane, diskUuid: req.diskUuid });
    await this.#admit(ctx, (check, sig) => check.checkJoin(req, ctx.peer, sig));
    const parts = await this.#gather(req, ctx, log);
    await this.#out('KUBERNETES_UNAVAILABLE', 'adding node to joining nodes', ctx, () =>
      this.deps.joiningNodes.add({ nodeName: req.nodeName, componentsReference: parts.componentsReference, isControlPlane: req.isControlPlane }),
    );
    log.info('join ticket issued', { nodeName: req.nodeName, isControlPlane: req.isControlPlane, controlPlaneFiles: parts.controlPlaneFiles.length });
    return this.#response(parts);
  }

  /** Runs the admission checks in order (identity binding, ...), each under the outbound deadline. */
  async #admit(ctx: TicketContext, run: (check: TicketCheck, signal: AbortSignal) => Promise<void>): Promise<void> {
    for (const check of this.deps.admission ?? []) await this.#out('KUBERNETES_UNAVAILABLE', `checking ${check.name}`, ctx, (sig) => run(check, sig));
  }

  /**
   * The ticket's parts, concurrently: keyservice keys, certSANs -> SSH certificate, bootstrap
   * token, components reference -> components, kubelet certificate, control-plane files.
   */
  #gather(req: JoinRequest, ctx: TicketContext, log: Logger): Promise<JoinTicketParts> {
    const d = this.deps;
    const key = (context: string, id: string, length: number) => this.#out('KEYSERVICE_UNAVAILABLE', context, ctx, (sig) => d.keys.getDataKey(id, length, sig, ctx.joinId));
    // Started in this order (the first deadline to expire names the failure): keys, SSH, Kubernetes, signers.
    const measurementSecret = key('getting measurement secret', MEASUREMENT_SECRET_KEY_ID, 32);
    const stateDiskKey = key('getting key for stateful disk', req.diskUuid, STATE_DISK_KEY_LENGTH);
    const sshSeed = key('getting emergency SSH CA seed material', SSH_CA_KEY_SUFFIX, 32);
    const ssh = Promise.all([sshSeed, this.#principals(req.principals, ctx, log)]).then(([seed, principals]) =>
      this.#out('INTERNAL', 'generating and signing SSH host key', ctx, () => d.sshCa.sign(seed, req.hostKey, principals)),
    );
    const token = this.#out('KUBERNETES_UNAVAILABLE', 'generating Kubernetes join arguments', ctx, () => d.tokens.createJoinToken(JOIN_TOKEN_TTL_MS));
    const componentsReference = this.#out('KUBERNETES_UNAVAILABLE', 'getting components ConfigMap name', ctx, () => d.components.componentsReference());
    return allNamed<JoinTicketParts>({
      measurementSecret,
      stateDiskKey,
      ssh,
      token,
      componentsReference,
      components: componentsReference.then((ref) => this.#out('KUBERNETES_UNAVAILABLE', 'getting components', ctx, () => d.components.components(ref))),
      kubeletCert: this.#out('INTERNAL', 'generating kubelet certificate', ctx, () => d.kubeletCa.sign(req.csr)),
      controlPlaneFiles: req.isControlPlane ? this.#out('INTERNAL', 'loading control-plane certificates and keys', ctx, () => d.controlPlaneFiles.read()) : Promise.resolve([]),
    });
  }

  /** The wire response from the named parts. */
  #response(p: JoinTicketParts): join.IssueJoinTicketResponse {
    return {
      stateDiskKey: p.stateDiskKey,
      measurementSalt: this.deps.measurementSalt,
      measurementSecret: p.measurementSecret,
      kubeletCert: p.kubeletCert,
      apiServerEndpoint: p.token.apiServerEndpoint,
      token: p.token.token,
      discoveryTokenCaCertHash: p.token.discoveryTokenCaCertHash,
      controlPlaneFiles: p.controlPlaneFiles,
      kubernetesVersion: '',
      kubernetesComponents: p.components,
      authorizedCaPublicKey: p.ssh.caPublicKey,
      hostCertificate: p.ssh.certificate,
    };
  }

  /** Requested principals + apiServer certSANs (a failed read only loses the SANs), deduplicated; the peer if none. */
  async #principals(requested: string[], ctx: TicketContext, log: Logger): Promise<string[]> {
    let principals = [...requested];
    try {
      principals.push(...(await this.#out('INTERNAL', 'reading apiServer certSANs', ctx, () => this.deps.certSans.certSans())));
    } catch (err) {
      log.warn('reading apiServer certSANs failed, using the requested principals only', { err });
    }
    principals = [...new Set(principals.filter((p) => p !== ''))];
    return principals.length > 0 ? principals : [ctx.peer.address || 'unknown'];
  }

  /** IssueRejoinTicket for a parsed request: admission checks, then only the disk key and the measurement secret. */
  async issueRejoinTicket(req: RejoinRequest, ctx: TicketContext): Promise<join.IssueRejoinTicketResponse> {
    const log = this.deps.logger.child({ joinId: ctx.joinId });
    log.info('issuing rejoin ticket', { diskUuid: req.diskUuid });
    await this.#admit(ctx, (check, sig) => check.checkRejoin(req, ctx.peer, sig));
    const [measurementSecret, stateDiskKey] = await Promise.all([
      this.#out('KEYSERVICE_UNAVAILABLE', 'unable to get measurement secret', ctx, (sig) => this.deps.keys.getDataKey(MEASUREMENT_SECRET_KEY_ID, 32, sig, ctx.joinId)),
      this.#out('KEYSERVICE_UNAVAILABLE', 'unable to get key for stateful disk', ctx, (sig) => this.deps.keys.getDataKey(req.diskUuid, STATE_DISK_KEY_LENGTH, sig, ctx.joinId)),
    ]);
    log.info('rejoin ticket issued');
    return { stateDiskKey, measurementSecret };
  }
}
