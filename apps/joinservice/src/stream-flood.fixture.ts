/**
 * Test-only entry of stream-flood.int.spec.ts: the joinservice's server (startJoinService with the
 * production aTLS transport and a qemu-vtpm validator) in its own process, so the test can read its
 * RSS and log bytes. The ticket back ends are never reached (every request of the test is refused
 * or never arrives); each one fails loudly if it were.
 * argv: <PCR 4 hex>
 */
import { QemuVtpmValidator } from '@asterism/attestation';
import { atlsServerCredentials } from '@asterism/atls';
import { createLogger } from '@asterism/logger';
import { startJoinService } from './service.js';
import type { TicketIssuerDeps } from './ticket/ticket-issuer.js';

const unreachable = new Proxy(
  {},
  {
    get: (_t, name) => () => Promise.reject(new Error(`stream-flood fixture: back end ${String(name)} must not be reached`)),
  },
);
const logger = createLogger({ component: 'joinservice' });
const validator = new QemuVtpmValidator(new Map([[4, { expected: Buffer.from(process.argv[2] ?? '', 'hex'), validationOpt: 'Enforce' as const }]]));
const issuer = {
  keys: unreachable,
  tokens: unreachable,
  components: unreachable,
  kubeletCa: unreachable,
  controlPlaneFiles: unreachable,
  joiningNodes: unreachable,
  certSans: unreachable,
  sshCa: unreachable,
  measurementSalt: Buffer.alloc(32, 0x33),
} as unknown as Omit<TicketIssuerDeps, 'logger' | 'admission'>;

const running = await startJoinService({
  issuer,
  validator,
  transport: (v) => {
    const credentials = atlsServerCredentials({ clientValidators: [v], logger });
    return { credentials, refusals: () => credentials.refusals, attestedPeer: (peer) => credentials.peerOf({ getPeer: () => peer }) };
  },
  logger,
  host: '127.0.0.1',
  port: 0,
  metricsPort: 0,
  ratePerSecond: 1000,
  rateBurst: 1000,
});
process.on('SIGTERM', () => void running.stop(1000).then(() => process.exit(0)));
