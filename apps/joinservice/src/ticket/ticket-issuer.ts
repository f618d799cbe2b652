import { MEASUREMENT_SECRET_KEY_ID, SSH_CA_KEY_SUFFIX, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import { isAsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import type { join } from '@asterism/proto';
import { RpcError } from '@asterism/service-runtime';
import { JoinError, OutboundCallError } from './errors.js';
import type {
  CertSansSource,
  ComponentsSource,
  ControlPlaneFiles,
  DataKeySource,
  JoiningNodeRecorder,
  JoinTokenSource,
  KubeletCertSigner,
  SshHostCertSigner,
} from './ports.js';
import type { DenyListCheck } from './deny-list-check.js';
import type { IdentityBindingStage } from './identity-binding.js';
import { validateDiskUuid, validateJoinRequest, type CsrValidator, type HostKeyValidator } from './request-validation.js';

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
  csrValidator: CsrValidator;
  hostKeyValidator: HostKeyValidator;
  /** The measurement salt from `join-config` (raw bytes). */
  measurementSalt: Buffer;
  logger: Logger;
  /** Strict identity binding (docs/adr/0008); absent = `--identity-binding=off` (the reference's behaviour). */
  identity?: IdentityBindingStage;
  /** The attestation deny list (docs/adr/0037); absent = no continuous attestation. */
  denyList?: DenyListCheck;
  /** Deadline of each outbound call of a ticket (keyservice, Kubernetes API, signers). Default 10 s. */
  outboundTimeoutMs?: number;
}

/** Default deadline of one outbound call: a join waits at most a few of these, not forever. */
export const OUTBOUND_TIMEOUT_MS = 10_000;

/** Per-request context: the peer address (fallback SSH principal) and a join id for logs. */
export interface TicketContext {
  peer: string;
  joinId: string;
  signal?: AbortSignal;
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
   * IssueJoinTicket. After validation the independent steps run concurrently (keyservice keys,
   * certSANs, SSH certificate, bootstrap token, components, kubelet certificate, control-plane
   * files); the JoiningNode record, the only step that must not happen for a failed ticket, runs
   * last once everything else succeeded.
   */
  async issueJoinTicket(req: join.IssueJoinTicketRequest, ctx: TicketContext): Promise<join.IssueJoinTicketResponse> {
    const d = this.deps;
    const log = d.logger.child({ joinId: ctx.joinId });
    const valid = validateJoinRequest(req, d.csrValidator, d.hostKeyValidator);
    log.info('issuing join ticket', { nodeName: valid.nodeName, isControlPlane: valid.isControlPlane, diskUuid: valid.diskUuid });
    await this.#notQuarantined(valid.diskUuid, ctx);
    const identity = d.identity;
    if (identity) await this.#out('KUBERNETES_UNAVAILABLE', 'checking the node identity binding', ctx, (sig) => identity.checkJoin(valid, ctx.peer, sig));

    const measurementSecret = this.#out('KEYSERVICE_UNAVAILABLE', 'getting measurement secret', ctx, (sig) => d.keys.getDataKey(MEASUREMENT_SECRET_KEY_ID, 32, sig, ctx.joinId));
    const stateDiskKey = this.#out('KEYSERVICE_UNAVAILABLE', 'getting key for stateful disk', ctx, (sig) => d.keys.getDataKey(valid.diskUuid, STATE_DISK_KEY_LENGTH, sig, ctx.joinId));
    const sshSeed = this.#out('KEYSERVICE_UNAVAILABLE', 'getting emergency SSH CA seed material', ctx, (sig) => d.keys.getDataKey(SSH_CA_KEY_SUFFIX, 32, sig, ctx.joinId));
    const ssh = Promise.all([sshSeed, this.#principals(valid.principals, ctx, log)]).then(([seed, principals]) =>
      this.#out('INTERNAL', 'generating and signing SSH host key', ctx, () => d.sshCa.sign(seed, valid.hostKey, principals)),
    );
    const token = this.#out('KUBERNETES_UNAVAILABLE', 'generating Kubernetes join arguments', ctx, () => d.tokens.createJoinToken(JOIN_TOKEN_TTL_MS));
    const componentsRef = this.#out('KUBERNETES_UNAVAILABLE', 'getting components ConfigMap name', ctx, () => d.components.componentsReference());
    const components = componentsRef.then((ref) => this.#out('KUBERNETES_UNAVAILABLE', 'getting components', ctx, () => d.components.components(ref)));
    const kubeletCert = this.#out('INTERNAL', 'generating kubelet certificate', ctx, () => d.kubeletCa.sign(valid.csr));
    const controlPlaneFiles = valid.isControlPlane ? this.#out('INTERNAL', 'loading control-plane certificates and keys', ctx, () => d.controlPlaneFiles.read()) : Promise.resolve([]);
    const parts = await Promise.all([measurementSecret, stateDiskKey, ssh, token, componentsRef, components, kubeletCert, controlPlaneFiles]);
    const [secret, diskKey, sshCert, joinToken, ref, comps, cert, cpFiles] = parts;
    await this.#out('KUBERNETES_UNAVAILABLE', 'adding node to joining nodes', ctx, () =>
      d.joiningNodes.add({ nodeName: valid.nodeName, componentsReference: ref, isControlPlane: valid.isControlPlane }),
    );

    log.info('join ticket issued', { nodeName: valid.nodeName, isControlPlane: valid.isControlPlane, controlPlaneFiles: cpFiles.length });
    return {
      stateDiskKey: diskKey,
      measurementSalt: d.measurementSalt,
      measurementSecret: secret,
      kubeletCert: cert,
      apiServerEndpoint: joinToken.apiServerEndpoint,
      token: joinToken.token,
      discoveryTokenCaCertHash: joinToken.discoveryTokenCaCertHash,
      controlPlaneFiles: cpFiles,
      kubernetesVersion: '',
      kubernetesComponents: comps,
      authorizedCaPublicKey: sshCert.caPublicKey,
      hostCertificate: sshCert.certificate,
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
    return principals.length > 0 ? principals : [ctx.peer || 'unknown'];
  }

  /** The deny-list stage: before the identity binding and every key, token or object. */
  async #notQuarantined(diskUuid: string, ctx: TicketContext): Promise<void> {
    const denyList = this.deps.denyList;
    if (denyList) await this.#out('KUBERNETES_UNAVAILABLE', 'checking the attestation deny list', ctx, () => denyList.check(diskUuid, ctx.peer));
  }

  /** IssueRejoinTicket: only the disk key and the measurement secret. */
  async issueRejoinTicket(req: join.IssueRejoinTicketRequest, ctx: TicketContext): Promise<join.IssueRejoinTicketResponse> {
    const log = this.deps.logger.child({ joinId: ctx.joinId });
    validateDiskUuid(req.diskUuid);
    log.info('issuing rejoin ticket', { diskUuid: req.diskUuid });
    await this.#notQuarantined(req.diskUuid, ctx);
    const identity = this.deps.identity;
    if (identity) await this.#out('KUBERNETES_UNAVAILABLE', 'checking the node identity binding', ctx, () => identity.checkRejoin(req.diskUuid, ctx.peer));
    const [measurementSecret, stateDiskKey] = await Promise.all([
      this.#out('KEYSERVICE_UNAVAILABLE', 'unable to get measurement secret', ctx, (sig) => this.deps.keys.getDataKey(MEASUREMENT_SECRET_KEY_ID, 32, sig, ctx.joinId)),
      this.#out('KEYSERVICE_UNAVAILABLE', 'unable to get key for stateful disk', ctx, (sig) => this.deps.keys.getDataKey(req.diskUuid, STATE_DISK_KEY_LENGTH, sig, ctx.joinId)),
    ]);
    log.info('rejoin ticket issued');
    return { stateDiskKey, measurementSecret };
  }
}
