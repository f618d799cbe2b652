import { randomUUID } from 'node:crypto';
import { deriveClusterId } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import type { MetadataProvider, Role } from '@asterism/metadata';
import type { NodeLock } from '@asterism/nodelock';
import type { join } from '@asterism/proto';
import { parseComponents } from '../components/component-spec.js';
import type { StateDisk } from '../disk/state-disk.js';
import type { HostInfo } from '../host/ports.js';
import type { NodeFileWriter } from '../state/file-writer.js';
import { NODE_PATHS } from '../state/node-paths.js';
import { writeNodeState } from '../state/node-state.js';
import { Backoff, sleep } from './backoff.js';
import { timedStage } from '../stage-timer.js';
import { joinServiceEndpoints } from './endpoints.js';
import type { ClusterJoiner, HostKeySource, JoinServiceDialer, KubeletCsrFactory } from './ports.js';
import { waitForReachable, type ReachableOptions, type ReadinessProbe } from './readiness-probe.js';

/** Why the JoinClient gave up (the bootstrapper then resets the disk and reboots). */
export class JoinClientError extends AsterismError<'DISK_UNAVAILABLE' | 'LOCK_FAILED' | 'JOIN_FAILED' | 'TICKET_INVALID'> {}

/** Options of the JoinClient. */
export interface JoinClientOptions {
  joinServicePort?: number;
  /** Per join RPC. */
  rpcTimeoutMs?: number;
  /** Whole Kubernetes join phase, including retries (reference: 5 min, 3 attempts). */
  joinTimeoutMs?: number;
  joinAttempts?: number;
  /** Pause after a joinservice answered without a ticket (it is up but not ready). */
  backoff?: Backoff;
  /** Probing while no joinservice accepts connections. */
  reachable?: ReachableOptions;
}

/** Everything the JoinClient is built from. */
export interface JoinClientDeps {
  lock: NodeLock;
  dialer: JoinServiceDialer;
  metadata: MetadataProvider;
  disk: StateDisk;
  files: NodeFileWriter;
  host: HostInfo;
  hostKey: HostKeySource;
  csr: KubeletCsrFactory;
  /** Whether a joinservice listens (instead of sleeping blindly until one does). */
  probe: ReadinessProbe;
  cluster: ClusterJoiner;
  /** Called once the node is locked for this join (stops the InitServer). */
  onLocked: () => void;
  /** Called once, when the readiness probe first sees a joinservice (the start of the join-time measurement). */
  onReachable?: (at: Date) => void;
  logger: Logger;
}

/** A stage after the lock failed: the node is locked, the bootstrapper resets the disk and reboots. */
const joinFailed = (step: string, err: unknown) => new JoinClientError('JOIN_FAILED', `${step}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });

/** How the JoinClient ended. */
export type JoinOutcome = 'joined' | 'stopped' | 'lost-race';

/** This node as it joins with one ticket: its metadata identity, kubelet key and the join id. */
interface JoiningNode {
  name: string;
  role: Role;
  vpcIp: string;
  providerId: string;
  kubeletKeyPem: string;
  joinId: string;
}

/**
 * Polls metadata and the joinservices until a ticket arrives, then takes the node lock and
 * joins (docs/protocol/bootstrapper.md). While no joinservice accepts connections a cheap TCP readiness probe with
 * jitter runs (the ticket is asked for as soon as one does); jittered exponential backoff only
 * follows attempts that reached a joinservice and still got no ticket.
 */
export class JoinClient {
  readonly #stop = new AbortController();
  #running: Promise<JoinOutcome> | undefined;
  readonly #port: number;
  readonly #backoff: Backoff;

  constructor(
    private readonly deps: JoinClientDeps,
    private readonly options: JoinClientOptions = {},
  ) {
    this.#port = options.joinServicePort ?? 30090;
    this.#backoff = options.backoff ?? new Backoff();
  }

  /** Runs the join loop once; resolves when joined, stopped, or beaten by the InitServer. */
  start(): Promise<JoinOutcome> {
    this.#running ??= this.run();
    return this.#running;
  }

  /** Stops the loop and waits for it to return (also fine when it already ended). */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running?.catch(() => undefined);
  }

  private get signal(): AbortSignal {
    return this.#stop.signal;
  }

  private async run(): Promise<JoinOutcome> {
    const d = this.deps;
    let diskUuid: string;
    try {
      diskUuid = await d.disk.uuid();
    } catch (err) {
      throw new JoinClientError('DISK_UNAVAILABLE', `reading state disk UUID: ${(err as Error).message}`, { cause: err });
    }

    // 1. Who am I?
    let self: { name: string; role: Role; vpcIp: string; providerId: string } | undefined;
    this.#backoff.reset();
    while (!self) {
      try {
        const s = await d.metadata.self(this.signal);
        if (s.Name && s.Role !== 'Unknown') self = { name: s.Name, role: s.Role, vpcIp: s.VPCIP, providerId: s.ProviderID };
        else d.logger.warn('metadata has no name or role for this node yet', { name: s.Name, role: s.Role });
      } catch (err) {
        d.logger.warn('reading own metadata failed', { err });
      }
      if (!self && !(await sleep(this.#backoff.next(), this.signal))) return 'stopped';
    }
    d.logger.info('joining as', { nodeName: self.name, role: self.role });

    // 2. Find a joinservice that issues a ticket. The request material is made once.
    const material = await this.requestMaterial(self);
    this.#backoff.reset();
    let reached = false;
    for (;;) {
      const endpoints = await waitForReachable(() => this.endpoints(), d.probe, this.signal, this.options.reachable);
      if (!endpoints) return 'stopped';
      if (!reached) {
        reached = true;
        d.logger.info('joinservice reachable', { endpoints });
        d.onReachable?.(new Date());
      }
      const got = await this.tryEndpoints(endpoints, diskUuid, self, material);
      if (got) return this.startNodeAndJoin(got.ticket, { ...self, joinId: got.joinId, kubeletKeyPem: material.kubeletKeyPem });
      if (!(await sleep(this.#backoff.next(), this.signal))) return 'stopped';
    }
  }

  /** Kubelet key + CSR, host key and principals: the same for every attempt, made concurrently. */
  private async requestMaterial(self: { name: string; vpcIp: string }) {
    const d = this.deps;
    const [csr, addresses, hostname, hostPublicKey] = await Promise.all([d.csr.create(self.name, self.vpcIp ? [self.vpcIp] : []), d.host.addresses(), d.host.hostname(), d.hostKey.publicKeyWire()]);
    return { csrDer: csr.csrDer, kubeletKeyPem: csr.privateKeyPem, principals: [...addresses, hostname], hostPublicKey };
  }

  private endpoints(): Promise<string[]> {
    return joinServiceEndpoints(this.deps.metadata, this.#port, this.deps.logger, { signal: this.signal });
  }

  private async tryEndpoints(endpoints: string[], diskUuid: string, self: { role: Role }, m: { csrDer: Buffer; principals: string[]; hostPublicKey: Buffer }) {
    const d = this.deps;
    for (const endpoint of endpoints) {
      const joinId = randomUUID();
      const asked = performance.now();
      try {
        const timeout = AbortSignal.timeout(this.options.rpcTimeoutMs ?? 30_000);
        const ticket = await d.dialer.issueJoinTicket(
          endpoint,
          { diskUuid, certificateRequest: m.csrDer, isControlPlane: self.role === 'ControlPlane', hostPublicKey: m.hostPublicKey, hostCertificatePrincipals: m.principals },
          { joinId, signal: AbortSignal.any([timeout, this.signal]) },
        );
        d.logger.info('received join ticket', { endpoint, joinId, durationMs: Math.round(performance.now() - asked) });
        return { ticket, joinId };
      } catch (err) {
        if (this.signal.aborted) return undefined;
        d.logger.warn('join ticket request failed', { endpoint, joinId, durationMs: Math.round(performance.now() - asked), err });
      }
    }
    return undefined;
  }

  /**
   * With a ticket: check it, take the lock, write the node's files, join Kubernetes. Every line
   * from here on carries the join id of the ticket's request.
   */
  private async startNodeAndJoin(ticket: join.IssueJoinTicketResponse, node: JoiningNode): Promise<JoinOutcome> {
    const log = this.deps.logger.child({ joinId: node.joinId });
    checkTicket(ticket);
    if ((await this.lockForTicket(ticket)) === 'already-locked') {
      log.info('node already locked by the InitServer, not joining');
      return 'lost-race';
    }
    await this.writeNodeFiles(ticket, node, log);
    await this.joinKubernetes(ticket, node, log);
    return 'joined';
  }

  /** Takes the node lock with the ticket's cluster ID (marks the node) and stops the InitServer. */
  private async lockForTicket(ticket: join.IssueJoinTicketResponse): Promise<'locked' | 'already-locked'> {
    const clusterId = deriveClusterId(ticket.measurementSecret, ticket.measurementSalt);
    let lock;
    try {
      lock = await this.deps.lock.tryLockOnce(clusterId, 'join');
    } catch (err) {
      throw new JoinClientError('LOCK_FAILED', `locking node: ${(err as Error).message}`, { cause: err });
    }
    if (lock === 'already-locked') return lock;
    this.deps.onLocked();
    return 'locked';
  }

  /**
   * The timed stages after the lock: the disk re-key runs beside the control-plane, kubelet and SSH
   * files (they do not depend on each other), then the node state is persisted.
   */
  private async writeNodeFiles(ticket: join.IssueJoinTicketResponse, { kubeletKeyPem, role }: JoiningNode, log: Logger): Promise<void> {
    const d = this.deps;
    const stage = (step: string, fn: () => Promise<unknown>) => timedStage(log, 'join step finished', step, fn, joinFailed);
    await Promise.all([
      stage('updating disk passphrase', () => d.disk.updatePassphrase(ticket.stateDiskKey)),
      role === 'ControlPlane' ? stage('writing control-plane files', () => this.writeControlPlaneFiles(ticket.controlPlaneFiles)) : Promise.resolve(),
      stage('writing kubelet credentials', async () => {
        await d.files.writeExclusive(NODE_PATHS.kubeletCert, ticket.kubeletCert);
        await d.files.writeExclusive(NODE_PATHS.kubeletKey, kubeletKeyPem);
      }),
      stage('writing SSH CA and host certificate', async () => {
        await d.files.writeExclusive(NODE_PATHS.sshCaPublicKey, ticket.authorizedCaPublicKey);
        await d.files.writeExclusive(NODE_PATHS.sshHostCertificate, ticket.hostCertificate);
      }),
    ]);
    await stage('persisting node state', () => writeNodeState(d.files, { role, measurementSalt: Buffer.from(ticket.measurementSalt) }));
  }

  /** Control-plane PKI below /etc/kubernetes/pki (names checked by {@link checkTicket}). */
  private async writeControlPlaneFiles(files: join.controlPlaneCertOrKey[]): Promise<void> {
    for (const f of files) {
      await this.deps.files.writeExclusive(`${NODE_PATHS.kubernetesPki}/${f.name}`, f.data);
    }
  }

  /** Joins Kubernetes: a few attempts within one deadline (reference: 3 within 5 minutes). */
  private async joinKubernetes(ticket: join.IssueJoinTicketResponse, node: JoiningNode, log: Logger): Promise<void> {
    const d = this.deps;
    const attempts = this.options.joinAttempts ?? 3;
    const deadline = AbortSignal.timeout(this.options.joinTimeoutMs ?? 5 * 60_000);
    const request = {
      apiServerEndpoint: ticket.apiServerEndpoint,
      token: ticket.token,
      caCertHashes: [ticket.discoveryTokenCaCertHash],
      role: node.role,
      nodeName: node.name,
      nodeIp: node.vpcIp,
      providerId: node.providerId,
      components: ticket.kubernetesComponents,
      kubeletCertPem: ticket.kubeletCert,
      kubeletKeyPem: node.kubeletKeyPem,
      joinId: node.joinId,
    };
    let last: unknown;
    const joinStarted = performance.now();
    for (let i = 1; i <= attempts && !deadline.aborted; i++) {
      try {
        await d.cluster.joinCluster(request, deadline);
        log.info('joined the cluster', { nodeName: node.name, attempt: i, durationMs: Math.round(performance.now() - joinStarted) });
        return;
      } catch (err) {
        last = err;
        log.warn('joining the cluster failed', { attempt: i, err });
      }
    }
    throw new JoinClientError('JOIN_FAILED', `joining cluster: ${(last as Error | undefined)?.message ?? 'timed out'}`, { cause: last });
  }
}

/** A control-plane file name: a relative path below the PKI folder, no `..`. */
const PKI_NAME = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/**
 * The whole ticket checked before the lock or any file (validate before side effects): the secrets
 * are there, the control-plane file names stay below the PKI folder, and the Kubernetes components
 * are well-formed (docs/protocol/components.md; their artifacts are hash-checked when installed).
 */
function checkTicket(ticket: join.IssueJoinTicketResponse): void {
  if (ticket.measurementSecret.length === 0 || ticket.stateDiskKey.length === 0) {
    throw new JoinClientError('TICKET_INVALID', 'join ticket lacks the measurement secret or the state disk key');
  }
  for (const f of ticket.controlPlaneFiles) {
    if (!PKI_NAME.test(f.name) || f.name.split('/').includes('..')) throw new JoinClientError('TICKET_INVALID', `refusing control-plane file name ${JSON.stringify(f.name)}`);
  }
  try {
    parseComponents(ticket.kubernetesComponents);
  } catch (err) {
    throw new JoinClientError('TICKET_INVALID', `join ticket names malformed Kubernetes components: ${(err as Error).message}`, { cause: err });
  }
}
