import type { Logger } from '@asterism/logger';
import { Cleaner } from './clean/cleaner.js';
import type { InitOutcome } from './initserver/init-server.js';
import type { JoinOutcome } from './joinclient/join-client.js';

/** What this boot finds on the node. */
export type NodeCondition =
  /** Never initialised: race InitServer against JoinClient. */
  | 'fresh'
  /** Initialised before (node state on the state disk) but not marked in this boot: rejoin. */
  | 'initialized'
  /** Already marked in this boot (PCR 15 non-zero): only start the node agent. */
  | 'bootstrapped';

/** Reboot and disk-reset decisions (the reference reboots the VM; a local node exits). */
export interface NodeControl {
  markDiskForReset(): Promise<void>;
  reboot(reason: string): Promise<void>;
}

/** The InitServer as run() drives it. */
export interface InitService {
  /** Serves until stopped; resolves afterwards. */
  serve(): Promise<void>;
  stop(): Promise<void>;
  readonly outcome: InitOutcome;
}

/** The JoinClient as run() drives it. */
export interface JoinService {
  start(): Promise<JoinOutcome>;
  stop(): Promise<void>;
}

/** Everything run() is built from. */
export interface RunDeps {
  condition(): Promise<NodeCondition>;
  /** Rejoin after a reboot (IssueRejoinTicket, re-mark); resolves false when stopped. */
  rejoin(): Promise<boolean>;
  /** Starts the node agent of an already joined node (kubelet; the local backend's registration). */
  startNodeAgent(): Promise<void>;
  /** Built lazily: a bootstrapped node never opens its init port. */
  initServer(cleaner: Cleaner): Promise<InitService>;
  joinClient(cleaner: Cleaner): JoinService;
  control: NodeControl;
  logger: Logger;
}

/** How this boot ended. */
export type RunResult = 'initialized' | 'joined' | 'rejoined' | 'agent-started' | 'stopped' | 'failed';

/**
 * The bootstrapper's boot sequence (docs/protocol/bootstrapper.md): decide from the node's condition, then either
 * start the agent, rejoin, or race InitServer and JoinClient. The node lock decides the race; the
 * winner calls `cleaner.clean()`, which stops the loser and then the InitServer. A failure after
 * the node was locked marks the disk for reset and reboots.
 */
export async function runBootstrapper(d: RunDeps): Promise<RunResult> {
  const log = d.logger;
  let condition: NodeCondition;
  try {
    condition = await d.condition();
  } catch (err) {
    log.error('cannot determine node state', { err });
    await d.control.reboot(`determining node state: ${(err as Error).message}`);
    return 'failed';
  }
  log.info('node condition', { condition });
  if (condition === 'bootstrapped') {
    await d.startNodeAgent();
    return 'agent-started';
  }
  if (condition === 'initialized') {
    try {
      if (!(await d.rejoin())) return 'stopped';
      await d.startNodeAgent();
      return 'rejoined';
    } catch (err) {
      log.error('rejoin failed', { err });
      await d.control.reboot(`rejoin: ${(err as Error).message}`);
      return 'failed';
    }
  }

  const cleaner = new Cleaner();
  let init: InitService;
  try {
    init = await d.initServer(cleaner);
  } catch (err) {
    log.error('starting init server failed', { err });
    await d.control.reboot(`init server: ${(err as Error).message}`);
    return 'failed';
  }
  const joiner = d.joinClient(cleaner);
  cleaner.with(joiner).with(init);
  const cleaning = cleaner.start();

  let failed = false;
  const fail = async (what: string, err: unknown) => {
    if (failed) return;
    failed = true;
    log.error(`${what} failed`, { err });
    cleaner.clean();
    await d.control.markDiskForReset().catch((e: unknown) => log.error('marking disk for reset failed', { err: e }));
    await d.control.reboot(`${what}: ${(err as Error).message}`);
  };
  const [joinOutcome] = await Promise.all([
    joiner.start().catch(async (err: unknown) => {
      await fail('join', err);
      return 'stopped' as JoinOutcome;
    }),
    init.serve().catch((err: unknown) => fail('init server', err)),
  ]);
  await cleaning;
  if (failed) return 'failed';
  const initOutcome = init.outcome;
  if (initOutcome.kind === 'failed-after-lock') {
    await fail('init', new Error(initOutcome.error));
    return 'failed';
  }
  log.info('bootstrapper done', { init: initOutcome.kind, join: joinOutcome });
  if (initOutcome.kind === 'succeeded') return 'initialized';
  if (joinOutcome === 'joined') return 'joined';
  return 'stopped';
}
