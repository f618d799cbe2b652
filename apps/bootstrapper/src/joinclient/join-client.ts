import { randomUUID } from 'node:crypto';
import { deriveClusterId } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import type { MetadataProvider, Role } from '@asterism/metadata';
import type { NodeLock } from '@asterism/nodelock';
import type { join } from '@asterism/proto';
import type { StateDisk } from '../disk/state-disk.js';
import type { HostInfo } from '../initserver/ports.js';
import type { NodeFileWriter } from '../state/file-writer.js';
import { writeNodeState } from '../state/node-state.js';
import { Backoff, sleep } from './backoff.js';
import { joinServiceEndpoints } from './endpoints.js';
import type { ClusterJoiner, HostKeySource, JoinServiceDialer, KubeletCsrFactory } from './ports.js';
import { waitForReachable, type ReachableOptions, type ReadinessProbe } from './readiness-probe.js';

/** Files a joining node writes (SPEC.md §0.2). */
export const NODE_PATHS = {
  sshCaPublicKey: '/var/run/state/ssh/ssh_ca.pub',
  sshHostCertificate: '/var/run/state/ssh/ssh_host_cert.pub',
  kubeletCert: '/run/state/kubelet/pki/kubelet-client-crt.pem',
  kubeletKey: '/run/state/kubelet/pki/kubelet-client-key.pem',
  kubernetesPki: '/etc/kubernetes/pki',
} as const;

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
  logger: Logger;
}

/** How the JoinClient ended. */
export type JoinOutcome = 'joined' | 'stopped' | 'lost-race';

/**
 * Polls metadata and the joinservices until a ticket arrives, then takes the node lock and
 * joins (SPEC.md §8.4). While no joinservice accepts connections a cheap TCP readiness probe with
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
    let self: { name: string; role: Role; vpcIp: string } | undefined;
    this.#backoff.reset();
    while (!self) {
      try {
        const s = await d.metadata.self(this.signal);
        if (s.Name && s.Role !== 'Unknown') self = { name: s.Name, role: s.Role, vpcIp: s.VPCIP };
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
    for (;;) {
      const endpoints = await waitForReachable(() => this.endpoints(), d.probe, this.signal, this.options.reachable);
      if (!endpoints) return 'stopped';
      const got = await this.tryEndpoints(endpoints, diskUuid, self, material);
      if (got) return this.startNodeAndJoin(got, material.kubeletKeyPem, self.name, self);
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
      try {
        const timeout = AbortSignal.timeout(this.options.rpcTimeoutMs ?? 30_000);
        const ticket = await d.dialer.issueJoinTicket(
          endpoint,
          { diskUuid, certificateRequest: m.csrDer, isControlPlane: self.role === 'ControlPlane', hostPublicKey: m.hostPublicKey, hostCertificatePrincipals: m.principals },
          { joinId, signal: AbortSignal.any([timeout, this.signal]) },
        );
        d.logger.info('received join ticket', { endpoint, joinId });
        return ticket;
      } catch (err) {
        if (this.signal.aborted) return undefined;
        d.logger.warn('join ticket request failed', { endpoint, joinId, err });
      }
    }
    return undefined;
  }

  private async startNodeAndJoin(ticket: join.IssueJoinTicketResponse, kubeletKeyPem: string, nodeName: string, self: { role: Role; vpcIp: string }): Promise<JoinOutcome> {
    const d = this.deps;
    if (ticket.measurementSecret.length === 0 || ticket.stateDiskKey.length === 0) {
      throw new JoinClientError('TICKET_INVALID', 'join ticket lacks the measurement secret or the state disk key');
    }
    const clusterId = deriveClusterId(ticket.measurementSecret, ticket.measurementSalt);
    let lock;
    try {
      lock = await d.lock.tryLockOnce(clusterId, 'join');
    } catch (err) {
      throw new JoinClientError('LOCK_FAILED', `locking node: ${(err as Error).message}`, { cause: err });
    }
    if (lock === 'already-locked') {
      d.logger.info('node already locked by the InitServer, not joining');
      return 'lost-race';
    }
    d.onLocked();

    const step = async (context: string, fn: () => Promise<unknown>) => {
      const started = performance.now();
      try {
        await fn();
        d.logger.info('join step finished', { step: context, durationMs: Math.round(performance.now() - started) });
      } catch (err) {
        throw new JoinClientError('JOIN_FAILED', `${context}: ${(err as Error).message}`, { cause: err });
      }
    };
    // The disk re-key and the credential files do not depend on each other: run them together.
    await Promise.all([
      step('updating disk passphrase', () => d.disk.updatePassphrase(ticket.stateDiskKey)),
      self.role === 'ControlPlane'
        ? step('writing control-plane files', async () => {
            for (const f of ticket.controlPlaneFiles) {
              if (!/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(f.name) || f.name.split('/').includes('..')) throw new Error(`refusing control-plane file name ${JSON.stringify(f.name)}`);
              await d.files.writeExclusive(`${NODE_PATHS.kubernetesPki}/${f.name}`, f.data);
            }
          })
        : Promise.resolve(),
      step('writing kubelet credentials', async () => {
        await d.files.writeExclusive(NODE_PATHS.kubeletCert, ticket.kubeletCert);
        await d.files.writeExclusive(NODE_PATHS.kubeletKey, kubeletKeyPem);
      }),
      step('writing SSH CA and host certificate', async () => {
        await d.files.writeExclusive(NODE_PATHS.sshCaPublicKey, ticket.authorizedCaPublicKey);
        await d.files.writeExclusive(NODE_PATHS.sshHostCertificate, ticket.hostCertificate);
      }),
    ]);
    await step('persisting node state', () => writeNodeState(d.files, { role: self.role, measurementSalt: Buffer.from(ticket.measurementSalt) }));

    const attempts = this.options.joinAttempts ?? 3;
    const deadline = AbortSignal.timeout(this.options.joinTimeoutMs ?? 5 * 60_000);
    let last: unknown;
    const joinStarted = performance.now();
    for (let i = 1; i <= attempts && !deadline.aborted; i++) {
      try {
        await d.cluster.joinCluster(
          {
            apiServerEndpoint: ticket.apiServerEndpoint,
            token: ticket.token,
            caCertHashes: [ticket.discoveryTokenCaCertHash],
            role: self.role,
            nodeName,
            nodeIp: self.vpcIp,
            components: ticket.kubernetesComponents,
            kubeletCertPem: ticket.kubeletCert,
            kubeletKeyPem,
          },
          deadline,
        );
        d.logger.info('joined the cluster', { nodeName, attempt: i, durationMs: Math.round(performance.now() - joinStarted) });
        return 'joined';
      } catch (err) {
        last = err;
        d.logger.warn('joining the cluster failed', { attempt: i, err });
      }
    }
    throw new JoinClientError('JOIN_FAILED', `joining cluster: ${(last as Error | undefined)?.message ?? 'timed out'}`, { cause: last });
  }
}
