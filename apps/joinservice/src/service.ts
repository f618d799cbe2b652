import * as grpc from '@grpc/grpc-js';
import type { Validator } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import { join } from '@asterism/proto';
import { GrpcServer, PeerRateLimiter, ServiceMetrics, type MetricsEndpoint } from '@asterism/service-runtime';
import { JoinServer } from './join-server.js';
import type { CollateralCounts } from '@asterism/validator-sources';
import { JoinMetrics } from './metrics.js';
import { TicketIssuer, type TicketIssuerDeps } from './ticket/ticket-issuer.js';
import { MeteredValidator } from './attestation/metered-validator.js';
import type { AttestationLookup } from './identity/peer-identity.js';
import type { TicketCheck } from './ticket/admission.js';
import { IdentityBindingStage, type IdentityBindingDeps } from './ticket/identity-binding.js';
import { DenyListCheck, type DenyListLookup } from './ticket/deny-list-check.js';

/** How the server authenticates peers: aTLS credentials plus the interceptors that gate calls. */
export interface ServerTransport {
  credentials: grpc.ServerCredentials;
  interceptors?: grpc.ServerInterceptor[];
  /** Connections the transport refused before attestation, by reason (aTLS admission limits). */
  refusals?: () => Readonly<Record<string, number>>;
  /** The verified attestation of a connection by grpc-js peer string (identity binding needs it). */
  attestedPeer?: AttestationLookup;
}

/** Builds the transport around the (metered, hot-reloading) validator of joining nodes. */
export type TransportFactory = (validator: Validator) => ServerTransport;

/** A running joinservice. */
export interface RunningJoinService {
  port: number;
  metricsPort: number | undefined;
  metrics: ServiceMetrics;
  stop(graceMs?: number): Promise<void>;
}

/** Options of {@link startJoinService}. */
export interface JoinServiceOptions {
  issuer: Omit<TicketIssuerDeps, 'logger' | 'admission'>;
  /** `--identity-binding=strict` (docs/adr/0008): where names, roles and bindings come from; absent = off. */
  identity?: Pick<IdentityBindingDeps, 'directory' | 'store'>;
  /**
   * Further admission checks (ticket/admission.ts), run before identity binding: the place for a
   * check by disk UUID or attestation key such as a deny list.
   */
  admission?: readonly TicketCheck[];
  /** The attestation deny list (docs/adr/0037); absent = not checked. Runs before every other admission check. */
  denyList?: DenyListLookup;
  validator: Validator;
  transport: TransportFactory;
  logger: Logger;
  host: string;
  port: number;
  metricsPort: number;
  ratePerSecond: number;
  rateBurst: number;
  /** Collateral cache counters (SEV-SNP/TDX), exported as `joinservice_collateral_*_total`. */
  collateralCounts?: CollateralCounts;
}

/** Largest join request we accept (CSR 16 KiB + host key 4 KiB + principals, with headroom). */
export const MAX_JOIN_REQUEST_BYTES = 256 * 1024;

/** Starts join.API (+ health + metrics) behind the given transport. */
export async function startJoinService(o: JoinServiceOptions): Promise<RunningJoinService> {
  const metrics = new ServiceMetrics('joinservice');
  const joinMetrics = new JoinMetrics(metrics.registry);
  const validator = new MeteredValidator(o.validator, joinMetrics, o.logger);
  const transport = o.transport(validator);
  const grpcServer = new GrpcServer({
    logger: o.logger,
    metrics,
    healthServices: ['join.API'],
    maxReceiveMessageLength: MAX_JOIN_REQUEST_BYTES,
    ...(transport.interceptors ? { interceptors: transport.interceptors } : {}),
  });
  if (transport.refusals) joinMetrics.observeConnectionRefusals(transport.refusals);
  if (o.collateralCounts) joinMetrics.observeCollateral(o.collateralCounts);
  const identity = o.identity ? new IdentityBindingStage({ ...o.identity, logger: o.logger }) : undefined;
  const admission = [...(o.denyList ? [new DenyListCheck(o.denyList)] : []), ...(o.admission ?? []), ...(identity ? [identity] : [])];
  const issuer = new TicketIssuer({ ...o.issuer, logger: o.logger, admission });
  const limiter = new PeerRateLimiter(o.ratePerSecond, o.rateBurst);
  const server = new JoinServer(issuer, o.logger, joinMetrics, limiter, () => o.validator.variant.name, transport.attestedPeer);
  grpcServer.server.addService(join.APIService, server.handlers() as unknown as grpc.UntypedServiceImplementation);
  const port = await grpcServer.listen(o.host, o.port, transport.credentials);
  let metricsEndpoint: MetricsEndpoint | undefined;
  if (o.metricsPort >= 0) metricsEndpoint = await metrics.listen(o.host, o.metricsPort);
  o.logger.info('joinservice serving', { host: o.host, port, metricsPort: metricsEndpoint?.port, variant: o.validator.variant.name, identityBinding: identity ? 'strict' : 'off' });
  return {
    port,
    metricsPort: metricsEndpoint?.port,
    metrics,
    async stop(graceMs = 10_000) {
      await grpcServer.stop(graceMs);
      await metricsEndpoint?.close();
    },
  };
}
