/** `asterism nodes` (alias `status`): every node's attestation state as a table (docs/protocol/continuous-attestation.md). */
import type { NodeView } from '@asterism/node-attestation';

/** Human age of a duration: 45s, 12m, 3h, 2d. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** One row per node: name, role, variant, verified, last check, age, reason, quarantined. */
export function nodesTable(nodes: NodeView[], now: Date): string {
  const rows = [['NODE', 'ROLE', 'VARIANT', 'VERIFIED', 'LAST CHECK', 'AGE', 'REASON', 'QUARANTINED']];
  for (const n of [...nodes].sort((a, b) => a.name.localeCompare(b.name))) {
    const c = n.condition;
    const last = c?.lastHeartbeatTime ? new Date(c.lastHeartbeatTime) : undefined;
    rows.push([
      n.name,
      n.controlPlane ? 'control-plane' : 'worker',
      n.evidence?.variant ?? '-',
      c ? (c.status === 'True' ? 'yes' : c.status === 'False' ? 'NO' : 'unknown') : 'never',
      last ? last.toISOString().replace(/\.\d+Z$/, 'Z') : '-',
      last ? age(now.getTime() - last.getTime()) : '-',
      c?.reason ?? '-',
      n.quarantined ? 'YES' : 'no',
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
