/**
 * One round of continuous attestation (docs/protocol/continuous-attestation.md): read the current
 * attestation config and mode -> list the nodes -> check each (bounded concurrency) -> decide and
 * record each verdict (condition, evidence, Events, quarantine). Every dependency is a port.
 */
import type { Validator } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import type { NodeTarget } from './node-check.js';
import type { NodeView } from './node-status.js';
import { decide, type Decision, type EnforcementMode } from './quarantine-policy.js';
import type { MonitorMetrics } from './monitor-metrics.js';
import type { Verdict } from './verdict.js';

/** What a round is judged by, read fresh every round. */
export interface MonitorInputs {
  read(): Promise<{ configJson: string; mode: EnforcementMode }>;
}

/** The Kubernetes side: nodes, their status and Events. */
export interface NodeStore {
  list(): Promise<NodeView[]>;
  setCondition(node: NodeView, v: Verdict): Promise<void>;
  setEvidence(node: string, summary: NonNullable<Verdict['evidence']>): Promise<void>;
  event(node: Pick<NodeView, 'name' | 'uid'>, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}

/** Quarantines a node (deny list, taint, Event). */
export interface Quarantiner {
  quarantine(node: NodeView, reason: string, message: string, evidence?: Verdict['evidence']): Promise<unknown>;
}

/** Checks one node with a validator. */
export interface Checker {
  check(node: NodeTarget, validator: Validator): Promise<Verdict>;
}

/** Everything a round needs. */
export interface MonitorDeps {
  inputs: MonitorInputs;
  nodes: NodeStore;
  quarantine: Quarantiner;
  checker: Checker;
  /** Builds the running-node validator from the attestation config JSON (as the joinservice decodes it). */
  buildValidator: (configJson: string) => Validator;
  /** The node's verification service `host:port`; undefined when it has no address yet. */
  endpointOf: (node: NodeView) => string | undefined;
  metrics: MonitorMetrics;
  logger: Logger;
  graceMs: number;
  concurrency: number;
}

/** What one node's round did. */
export interface NodeOutcome {
  verdict: Verdict;
  decision: Decision;
}

/** Runs rounds; keeps, per node, when its current run of Unreachable verdicts began. */
export class AttestationMonitor {
  readonly #unreachableSince = new Map<string, Date>();
  #validator: { json: string; validator: Validator } | undefined;

  constructor(private readonly d: MonitorDeps) {}

  /** One round over every node. A failure to read inputs or list nodes skips the round (logged, counted). */
  async round(): Promise<NodeOutcome[]> {
    const started = process.hrtime.bigint();
    const { validator, mode } = await this.#policy();
    const nodes = await this.d.nodes.list();
    const verdicts = await this.#checkAll(nodes, validator);
    const outcomes = await this.#applyAll(nodes, verdicts, mode);
    this.d.metrics.roundSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    return outcomes;
  }

  /** The current config's validator, rebuilt only when the JSON changed. */
  async #policy(): Promise<{ validator: Validator; mode: EnforcementMode }> {
    const { configJson, mode } = await this.d.inputs.read();
    if (this.#validator?.json !== configJson) {
      this.#validator = { json: configJson, validator: this.d.buildValidator(configJson) };
      this.d.logger.info('attestation config loaded', { variant: this.#validator.validator.variant.name, mode });
    }
    return { validator: this.#validator.validator, mode };
  }

  /** Checks every node, `concurrency` at a time; a node without an address is Unreachable. */
  async #checkAll(nodes: NodeView[], validator: Validator): Promise<Verdict[]> {
    const out: Verdict[] = new Array(nodes.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < nodes.length; i = next++) {
        const node = nodes[i]!;
        const endpoint = this.d.endpointOf(node);
        out[i] = endpoint
          ? await this.d.checker.check({ name: node.name, endpoint }, validator)
          : { node: node.name, status: 'Unreachable', reason: 'Unreachable', message: 'the node has no InternalIP address', at: new Date(), latencyMs: 0 };
        this.d.metrics.observe(out[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.d.concurrency, nodes.length) }, worker));
    return out;
  }

  /** Decides and records, one node after the other (the control-plane count changes as we go). */
  async #applyAll(nodes: NodeView[], verdicts: Verdict[], mode: EnforcementMode): Promise<NodeOutcome[]> {
    const inputs = nodes.map((node, i) => ({ node, verdict: verdicts[i]!, since: this.#trackUnreachable(verdicts[i]!) }));
    const healthy = new Set(inputs.filter((x) => x.node.controlPlane && !x.node.quarantined && decide({ ...this.#policyInput(x, mode, 1) }).quarantine === 'no').map((x) => x.node.name));
    const outcomes: NodeOutcome[] = [];
    for (const x of inputs) {
      const others = [...healthy].filter((n) => n !== x.node.name).length;
      const decision = decide(this.#policyInput(x, mode, others));
      try {
        await this.#record(x.node, x.verdict, decision);
      } catch (err) {
        this.d.logger.error('recording a verdict failed', { node: x.node.name, err });
        this.d.metrics.roundFailures.inc({ stage: 'record' });
      }
      outcomes.push({ verdict: x.verdict, decision });
    }
    return outcomes;
  }

  #policyInput(x: { node: NodeView; verdict: Verdict; since: Date | undefined }, mode: EnforcementMode, others: number) {
    return { verdict: x.verdict, node: x.node, unreachableSince: x.since, graceMs: this.d.graceMs, mode, otherHealthyControlPlanes: others };
  }

  #trackUnreachable(v: Verdict): Date | undefined {
    if (v.status !== 'Unreachable') {
      this.#unreachableSince.delete(v.node);
      return undefined;
    }
    const since = this.#unreachableSince.get(v.node) ?? v.at;
    this.#unreachableSince.set(v.node, since);
    return since;
  }

  /** Condition, evidence, a transition Event, then the quarantine the decision asks for. */
  async #record(node: NodeView, v: Verdict, decision: Decision): Promise<void> {
    const log = { node: node.name, status: v.status, reason: v.reason, field: v.field, latencyMs: Math.round(v.latencyMs), quarantine: decision.quarantine };
    if (v.status === 'Verified') this.d.logger.debug('node verified', log);
    else this.d.logger.warn('node failed attestation', { ...log, detail: v.message });
    if (v.evidence) await this.d.nodes.setEvidence(node.name, v.evidence);
    if (!decision.record) return;
    const wasTrue = node.condition?.status === 'True';
    await this.d.nodes.setCondition(node, v);
    const what = v.field ? `${v.reason} (${v.field}): ${v.message}` : `${v.reason}: ${v.message}`;
    // Events on transitions only: a node failing for an hour is one Event, not sixty.
    const transition = v.status === 'Verified' ? !wasTrue : wasTrue || node.condition === undefined;
    if (transition && v.status === 'Verified') await this.d.nodes.event(node, 'Normal', 'AttestationVerified', 'attestation verified');
    if (transition && v.status !== 'Verified') await this.d.nodes.event(node, 'Warning', 'AttestationFailed', what);
    if (decision.quarantine === 'yes' || decision.quarantine === 'warn-only' || decision.quarantine === 'withheld') this.d.metrics.quarantines.inc({ outcome: decision.quarantine });
    if (decision.quarantine === 'yes') await this.d.quarantine.quarantine(node, v.reason, v.field ? `${v.field}: ${v.message}` : v.message, v.evidence ?? node.evidence);
    else if (transition && decision.quarantine === 'warn-only') await this.d.nodes.event(node, 'Warning', 'AttestationWouldQuarantine', `warn-only mode, not quarantined: ${what}`);
    else if (transition && decision.quarantine === 'withheld') await this.d.nodes.event(node, 'Warning', 'AttestationQuarantineWithheld', `the last healthy control plane is not quarantined: ${what}`);
  }
}
