import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@asterism/logger';
import type { Cleaner } from './clean/cleaner.js';
import type { InitOutcome } from './initserver/init-server.js';
import type { JoinOutcome } from './joinclient/join-client.js';
import { runBootstrapper, type NodeCondition, type RunDeps } from './run.js';

const logger = createLogger({ component: 'test', level: 'error' });

/** A scripted node: who wins the race, and what the control interface saw. */
function node(opts: { condition?: NodeCondition; winner?: 'init' | 'join' | 'init-fails-after-lock' | 'join-throws'; rejoin?: boolean | Error }) {
  const seen: string[] = [];
  let initStopped!: () => void;
  const initDone = new Promise<void>((r) => (initStopped = r));
  let outcome: InitOutcome = { kind: 'none' };
  const deps: RunDeps = {
    condition: async () => opts.condition ?? 'fresh',
    rejoin: async () => {
      seen.push('rejoin');
      if (opts.rejoin instanceof Error) throw opts.rejoin;
      return opts.rejoin ?? true;
    },
    startNodeAgent: async () => void seen.push('agent'),
    initServer: async (cleaner: Cleaner) => ({
      serve: async () => {
        seen.push('init:serve');
        if (opts.winner === 'init' || opts.winner === 'init-fails-after-lock') {
          outcome = opts.winner === 'init' ? { kind: 'succeeded' } : { kind: 'failed-after-lock', error: 'initializing cluster: boom' };
          cleaner.clean();
        }
        await initDone;
      },
      stop: async () => {
        seen.push('init:stop');
        initStopped();
      },
      get outcome() {
        return outcome;
      },
    }),
    joinClient: (cleaner: Cleaner) => {
      let stop!: (o: JoinOutcome) => void;
      const stopped = new Promise<JoinOutcome>((r) => (stop = r));
      return {
        start: async () => {
          if (opts.winner === 'join') {
            cleaner.clean();
            return 'joined';
          }
          if (opts.winner === 'join-throws') throw new Error('disk gone');
          return stopped;
        },
        stop: async () => {
          seen.push('join:stop');
          stop('stopped');
        },
      };
    },
    control: {
      markDiskForReset: async () => void seen.push('reset'),
      reboot: async (reason) => void seen.push(`reboot:${reason}`),
    },
    logger,
  };
  return { deps, seen };
}

describe('runBootstrapper', () => {
  it('init wins: the join client and then the init server are stopped', async () => {
    const { deps, seen } = node({ winner: 'init' });
    assert.equal(await runBootstrapper(deps), 'initialized');
    assert.ok(seen.includes('join:stop') && seen.includes('init:stop'));
    assert.ok(!seen.some((s) => s.startsWith('reboot') || s === 'reset'));
  });

  it('join wins: the init server is stopped and the result is joined', async () => {
    const { deps, seen } = node({ winner: 'join' });
    assert.equal(await runBootstrapper(deps), 'joined');
    assert.ok(seen.includes('init:stop'));
  });

  it('an init failure after the lock resets the disk and reboots', async () => {
    const { deps, seen } = node({ winner: 'init-fails-after-lock' });
    assert.equal(await runBootstrapper(deps), 'failed');
    assert.deepEqual(seen.slice(-2), ['reset', 'reboot:init: initializing cluster: boom']);
  });

  it('a join client error resets the disk and reboots, stopping the init server', async () => {
    const { deps, seen } = node({ winner: 'join-throws' });
    assert.equal(await runBootstrapper(deps), 'failed');
    assert.ok(seen.includes('init:stop') && seen.includes('reset') && seen.includes('reboot:join: disk gone'));
  });

  it('an initialised node rejoins and starts its agent without opening the init port', async () => {
    const { deps, seen } = node({ condition: 'initialized' });
    assert.equal(await runBootstrapper(deps), 'rejoined');
    assert.deepEqual(seen, ['rejoin', 'agent']);
  });

  it('a failed rejoin reboots without resetting the disk (its data is still good)', async () => {
    const { deps, seen } = node({ condition: 'initialized', rejoin: new Error('wrong key') });
    assert.equal(await runBootstrapper(deps), 'failed');
    assert.deepEqual(seen, ['rejoin', 'reboot:rejoin: wrong key']);
  });

  it('a node already marked in this boot only starts its agent', async () => {
    const { deps, seen } = node({ condition: 'bootstrapped' });
    assert.equal(await runBootstrapper(deps), 'agent-started');
    assert.deepEqual(seen, ['agent']);
  });
});
