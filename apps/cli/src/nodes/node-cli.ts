/**
 * `asterism nodes` / `status` and `asterism node quarantine|readmit <node>`
 * (docs/protocol/continuous-attestation.md).
 */
import { parseArgs } from 'node:util';
import { unmarshalAttestationConfig } from '@asterism/attestation';
import { awaitingRejoin, BoundDisks, DenyListStore, GrpcAttestationSource, NodeChecker, NodeStatusWriter, Quarantine, runningNodeConfig, type NodeView } from '@asterism/node-attestation';
import { loadCliConfig } from '../config/cli-config.js';
import { EXIT, seconds, UsageError, withPort } from '../usage.js';
import { buildCliValidator, type CliValidatorOptions } from '../validators/cli-validator.js';
import { validatorOptions, VALIDATOR_FLAG_OPTIONS, VALIDATOR_FLAGS_USAGE } from '../validators/validator-flags.js';
import { CLUSTER_FLAG_OPTIONS, CLUSTER_FLAGS_USAGE, clusterClients, clusterIdOf } from './cluster-access.js';
import { currentAttestationConfig } from './join-config.js';
import { nodesTable } from './nodes-table.js';

/** Output streams. */
export interface CommandOutput {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

/** Help of `asterism nodes`. */
export const NODES_USAGE = `Usage: asterism nodes [flags]   (alias: asterism status)

Every node's continuous attestation: role, variant, verified, last check and its age, reason,
quarantined.

Flags:
${CLUSTER_FLAGS_USAGE}`;

/** Help of `asterism node`. */
export const NODE_USAGE = `Usage: asterism node quarantine <node> [--reason <text>] [--force] [flags]
       asterism node readmit <node> [--cluster-id <id>] [--endpoint <host[:port]>] [flags]

quarantine: taints the node asterism.dev/attestation:NoExecute (its pods are evicted), deny-lists
its disks and attestation key (no join or rejoin ticket) and records an Event. The last healthy
control plane is refused unless --force.
readmit: attests the node now (fresh nonce, the cluster's current attestation config, the cluster
mark) and lifts the quarantine only if it passes; exit 1 while it still fails. A node that rebooted
and awaits its rejoin has no cluster mark yet: it passes on its measurements when it attests with
the attestation key of its last evidence (its rejoin is checked again by the joinservice).

Flags:
${CLUSTER_FLAGS_USAGE}
  --reason <text>               quarantine: why (default "operator")
  --force                       quarantine: even the last healthy control plane
  --cluster-id <id>             readmit: cluster ID (default: clusterID of <workspace>/asterism-id.json)
  --endpoint <host[:port]>      readmit: the node's verification service (default <InternalIP>:30081)
  --variant <v>                 readmit: variant (default: the node's last evidence)

${VALIDATOR_FLAGS_USAGE}`;

/** `asterism nodes`. */
export async function nodesCommand(argv: string[], out: CommandOutput, now = new Date()): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { ...CLUSTER_FLAG_OPTIONS, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return out.stdout(`${NODES_USAGE}\n`), EXIT.ok;
  const status = new NodeStatusWriter(clusterClients(values).core);
  out.stdout(`${nodesTable(await status.list(), now)}\n`);
  return EXIT.ok;
}

/** `asterism node quarantine|readmit <node>`; `overrides` add validator options (tests). */
export async function nodeCommand(argv: string[], out: CommandOutput, overrides: CliValidatorOptions = {}): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { ...CLUSTER_FLAG_OPTIONS, ...VALIDATOR_FLAG_OPTIONS, reason: { type: 'string' }, force: { type: 'boolean' }, 'cluster-id': { type: 'string' }, endpoint: { type: 'string' } },
  });
  if (values.help) return out.stdout(`${NODE_USAGE}\n`), EXIT.ok;
  const [action, name, ...extra] = positionals;
  if ((action !== 'quarantine' && action !== 'readmit') || !name || extra.length > 0) throw new UsageError('want: asterism node quarantine|readmit <node>');
  const core = clusterClients(values).core;
  const status = new NodeStatusWriter(core);
  const quarantine = new Quarantine(status, new DenyListStore(core), new BoundDisks(core));
  const node = await status.get(name);
  if (!node) throw new UsageError(`no node "${name}" in the cluster`);
  if (action === 'quarantine') return quarantineNode(node, await status.list(), quarantine, { reason: values.reason ?? 'operator', force: values.force ?? false }, out);
  const current = await currentAttestationConfig(core);
  const variant = values.variant ?? (await loadCliConfig(values.config)).attestation?.variant ?? node.evidence?.variant;
  if (!variant) throw new UsageError('the attestation variant is unknown (no evidence stored): pass --variant');
  const att = runningNodeConfig(unmarshalAttestationConfig(current.json, variant));
  const v = await buildCliValidator(att, { ...validatorOptions(values), ...overrides });
  try {
    const endpoint = values.endpoint ? withPort(values.endpoint, 30081) : node.internalIp ? withPort(node.internalIp, 30081) : undefined;
    if (!endpoint) throw new UsageError(`node ${name} has no InternalIP: pass --endpoint`);
    const checker = new NodeChecker({ source: new GrpcAttestationSource(), clusterId: await clusterIdOf(values), timeoutMs: seconds(values.timeout, 30) * 1000 });
    const verdict = await checker.check({ name, endpoint }, v.validator);
    // Evidence from another attestation key (e.g. a wrong --endpoint) is not the node's: kept only once it passes.
    if (verdict.evidence && (verdict.status === 'Verified' || verdict.evidence.akDigest === node.evidence?.akDigest)) await status.setEvidence(name, verdict.evidence);
    await status.setCondition(node, verdict);
    // A rebooted node that has not rejoined carries no mark yet: readmitted on its measurements
    // and its own attestation key; the joinservice checks its rejoin again.
    const unmarked = awaitingRejoin(verdict, node.evidence);
    if (verdict.status !== 'Verified' && !unmarked) {
      out.stderr(`asterism node readmit: refused, ${name} still fails: ${verdict.reason}${verdict.field ? ` (${verdict.field})` : ''}: ${verdict.message}\n`);
      return verdict.status === 'Unreachable' ? EXIT.unreachable : EXIT.refused;
    }
    const removed = await quarantine.readmit(node, `attestation passed (operator readmit)`);
    out.stdout(`Node ${name} passed attestation${unmarked ? ' (not marked yet: booted, awaiting its rejoin)' : ''} and is readmitted (${removed} deny-list entries removed${node.quarantined ? ', taint removed' : ''}).\n`);
    return EXIT.ok;
  } finally {
    await v.close();
  }
}

/** The control-plane rule, then the quarantine. */
async function quarantineNode(node: NodeView, all: NodeView[], quarantine: Quarantine, o: { reason: string; force: boolean }, out: CommandOutput): Promise<number> {
  if (node.quarantined) return out.stdout(`Node ${node.name} is already quarantined.\n`), EXIT.ok;
  const healthyOthers = all.filter((n) => n.controlPlane && n.name !== node.name && !n.quarantined && n.condition?.status !== 'False').length;
  if (node.controlPlane && healthyOthers === 0 && !o.force) {
    out.stderr(`asterism node quarantine: refused, ${node.name} is the last healthy control plane (pass --force to quarantine it anyway)\n`);
    return EXIT.refused;
  }
  const entries = await quarantine.quarantine(node, 'Operator', o.reason);
  out.stdout(`Node ${node.name} is quarantined: taint asterism.dev/attestation:NoExecute; deny-listed ${entries.map((e) => `${e.kind} ${e.id}`).join(', ') || 'nothing (no disk binding or attestation key known)'}.\n`);
  return EXIT.ok;
}
