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
  const condition = await readCondition(d);
  if (condition === undefined) return 'failed';
  d.logger.info('node condition', { condition });
  if (condition === 'bootstrapped') {
    await d.startNodeAgent();
    return 'agent-started';
  }
  if (condition === 'initialized') return rejoinNode(d);
  return raceInitAndJoin(d);
}

/** The node's condition; undefined after a failure to read it (the node was sent to reboot). */
async function readCondition(d: RunDeps): Promise<NodeCondition | undefined> {
  try {
    return await d.condition();
  } catch (err) {
    d.logger.error('cannot determine node state', { err });
    await d.control.reboot(`determining node state: ${(err as Error).message}`);
    return undefined;
  }
}

/** An initialised node rejoins and starts its agent; a failure reboots. */
async function rejoinNode(d: RunDeps): Promise<RunResult> {
  try {
    if (!(await d.rejoin())) return 'stopped';
    await d.startNodeAgent();
    return 'rejoined';
  } catch (err) {
    d.logger.error('rejoin failed', { err });
    await d.control.reboot(`rejoin: ${(err as Error).message}`);
    return 'failed';
  }
}

/** A fresh node races InitServer against JoinClient; the cleaner stops the loser. */
async function raceInitAndJoin(d: RunDeps): Promise<RunResult> {
  const log = d.logger;
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

  const fail = failOnce(d, cleaner);
  const [joinOutcome] = await Promise.all([
    joiner.start().catch(async (err: unknown) => {
      await fail('join', err);
      return 'stopped' as JoinOutcome;
    }),
    init.serve().catch((err: unknown) => fail('init server', err)),
  ]);
  await cleaning;
  if (fail.failed()) return 'failed';
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

/**
 * The failure path after the node may be locked, run at most once: stop both sides, mark the
 * disk for reset and reboot. `failed()` tells whether it ran.
 */
function failOnce(d: RunDeps, cleaner: Cleaner): ((what: string, err: unknown) => Promise<void>) & { failed: () => boolean } {
  let failed = false;
  const fail = async (what: string, err: unknown) => {
    if (failed) return;
    failed = true;
    d.logger.error(`${what} failed`, { err });
    cleaner.clean();
    await d.control.markDiskForReset().catch((e: unknown) => d.logger.error('marking disk for reset failed', { err: e }));
    await d.control.reboot(`${what}: ${(err as Error).message}`);
  };
  return Object.assign(fail, { failed: () => failed });
}
