// Controller-manager cost of the bootstrap-token step of a join, at 0 and after PRIOR earlier
// joins, for one token per join (before docs/adr/0020) and for SharedBootstrapTokens (after), each
// on its own fresh control plane of tools/k8s-testenv (real kube-apiserver + kube-controller-manager
// with the bootstrap signer and token cleaner), in one run.
//
//   npx tsx tools/bench/src/bootstrap-token-bench.ts   (env: PRIOR=1000 BLOCK=100 BLOCKS=3 GAP_MS=900 PACE_MS=20)
//
// Joins arrive GAP_MS apart on the pool's clock (900 ms: 1,000 joins in 15 min, the token TTL, so
// with one token per join all 1,000 are live at once, the steady state at that rate). After every
// join that created a new token the benchmark waits until the bootstrap signer has added that
// token's signature to kube-public/cluster-info, so the controller-manager's work for the join is
// inside the measurement. Measured joins are paced PACE_MS apart in real time in both strategies, so
// each block spans the same wall time and carries the same share of the controller-manager's
// background work (CPU is read from /proc in 10 ms ticks). Reported: controller-manager CPU ms per join (median over BLOCKS blocks of
// BLOCK joins), token-step latency p50, live tokens, and the ratio "after PRIOR" / "at 0".
import type * as k8s from '@kubernetes/client-node';
import { BootstrapTokenIssuer, JOIN_TOKEN_TTL_MS, SharedBootstrapTokens, type BootstrapTokenCreator } from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { cpuMs } from './proc-stats.js';
import { median, ratio } from './stats.js';

type Strategy = 'one token per join' | 'shared window token';

interface Point {
  cmCpuMsPerJoin: number;
  tokenStepP50Ms: number;
}

/** Waits until cluster-info carries the signature of token `id` (bounded). */
async function waitForSignature(core: k8s.CoreV1Api, id: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const cm = await core.readNamespacedConfigMap({ namespace: 'kube-public', name: 'cluster-info' });
    if (cm.data?.[`jws-kubeconfig-${id}`]) return;
    if (Date.now() > deadline) throw new Error(`bootstrap signer did not sign token ${id} within 30 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

class JoinDriver {
  readonly #seen = new Set<string>();
  #clock: number;
  readonly creator: BootstrapTokenCreator;

  constructor(
    strategy: Strategy,
    private readonly cp: TestControlPlane,
    private readonly gapMs: number,
  ) {
    this.#clock = Date.now();
    const issuer = new BootstrapTokenIssuer(cp.admin.core);
    this.creator = strategy === 'shared window token' ? new SharedBootstrapTokens(issuer, { windowMs: 60_000, now: () => this.#clock }) : issuer;
  }

  get liveTokens(): number {
    return this.#seen.size;
  }

  /** One join's token step (plus waiting for the signer when the token is new); returns the step's ms. */
  async join(): Promise<number> {
    this.#clock += this.gapMs;
    const t0 = performance.now();
    const token = await this.creator.create({ ttlMs: JOIN_TOKEN_TTL_MS });
    const stepMs = performance.now() - t0;
    if (!this.#seen.has(token.id)) {
      this.#seen.add(token.id);
      await waitForSignature(this.cp.admin.core, token.id);
    }
    return stepMs;
  }

  /** BLOCKS blocks of BLOCK joins: controller-manager CPU per join and token-step p50. */
  async measure(blocks: number, block: number, paceMs: number, cmPid: number): Promise<Point> {
    const perJoin: number[] = [];
    const steps: number[] = [];
    for (let b = 0; b < blocks; b++) {
      const cpu0 = cpuMs(cmPid);
      for (let i = 0; i < block; i++) {
        const started = performance.now();
        steps.push(await this.join());
        const rest = paceMs - (performance.now() - started);
        if (rest > 0) await new Promise((r) => setTimeout(r, rest));
      }
      perJoin.push((cpuMs(cmPid) - cpu0) / block);
    }
    return { cmCpuMsPerJoin: median(perJoin), tokenStepP50Ms: median(steps) };
  }
}

async function runStrategy(strategy: Strategy, env: { PRIOR: number; BLOCK: number; BLOCKS: number; GAP_MS: number; PACE_MS: number }) {
  const cp = await startTestControlPlane();
  try {
    const cmPid = cp.processes.find((p) => p.name === 'kube-controller-manager')!.child.pid!;
    const driver = new JoinDriver(strategy, cp, env.GAP_MS);
    await new Promise((r) => setTimeout(r, 2000)); // let the controllers finish their start-up sync
    const atZero = await driver.measure(env.BLOCKS, env.BLOCK, env.PACE_MS, cmPid);
    const priorStarted = Date.now();
    for (let i = 0; i < env.PRIOR; i++) await driver.join();
    const priorSeconds = (Date.now() - priorStarted) / 1000;
    const afterPrior = await driver.measure(env.BLOCKS, env.BLOCK, env.PACE_MS, cmPid);
    const cm = await cp.admin.core.readNamespacedConfigMap({ namespace: 'kube-public', name: 'cluster-info' });
    const signatures = Object.keys(cm.data ?? {}).filter((k) => k.startsWith('jws-kubeconfig-')).length;
    return { strategy, atZero, afterPrior, liveTokens: driver.liveTokens, signatures, priorSeconds };
  } finally {
    await cp.stop();
  }
}

async function main(): Promise<void> {
  const unavailable = testenvUnavailable();
  if (unavailable) throw new Error(unavailable);
  const env = {
    PRIOR: Number(process.env.PRIOR ?? 1000),
    BLOCK: Number(process.env.BLOCK ?? 100),
    BLOCKS: Number(process.env.BLOCKS ?? 3),
    GAP_MS: Number(process.env.GAP_MS ?? 900),
    PACE_MS: Number(process.env.PACE_MS ?? 20),
  };
  const results = [];
  for (const strategy of ['one token per join', 'shared window token'] as const) results.push(await runStrategy(strategy, env));
  console.log(`bootstrap-token step, controller-manager CPU per join, ${env.BLOCKS} x ${env.BLOCK} joins per point (${env.PACE_MS} ms pace), ${env.PRIOR} prior joins ${env.GAP_MS} ms apart on the pool clock`);
  console.table(
    results.map((r) => ({
      strategy: r.strategy,
      'CM ms/join @0': r.atZero.cmCpuMsPerJoin.toFixed(2),
      [`CM ms/join @${env.PRIOR}`]: r.afterPrior.cmCpuMsPerJoin.toFixed(2),
      [`@${env.PRIOR} / @0`]: ratio(r.afterPrior.cmCpuMsPerJoin, r.atZero.cmCpuMsPerJoin),
      'token step p50 ms @0': r.atZero.tokenStepP50Ms.toFixed(2),
      [`token step p50 ms @${env.PRIOR}`]: r.afterPrior.tokenStepP50Ms.toFixed(2),
      'tokens created': r.liveTokens,
      'cluster-info JWS': r.signatures,
      'prior joins s': r.priorSeconds.toFixed(1),
    })),
  );
  console.log(JSON.stringify({ bench: 'bootstrap-token', env, results }));
}

await main();
