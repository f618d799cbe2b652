import type { AttestationConfig } from '@asterism/attestation';
import { Measurements, validatorFor } from '@asterism/attestation';
import { EXIT } from '../usage.js';
import { GrpcAttestationSource } from './grpc-attestation-source.js';
import { formatMeasurementTable, measurementRows } from './report.js';
import { formatSnpReport, snpReportOf } from './snp-report.js';
import { verifyRunningNode, VerifyNodeError, type RunningNodeResult } from './running-node.js';

/** Output formats of `asterism verify`. */
export type VerifyOutput = 'table' | 'json' | 'raw';

/** Renders a running node's verification result in the chosen format. */
export function renderRunningNode(result: RunningNodeResult, att: AttestationConfig, output: VerifyOutput): string {
  if (output === 'raw') return Buffer.from(result.document).toString('utf8');
  const rows = result.pcrs ? measurementRows(att.measurements, result.pcrs) : [];
  if (output === 'json') {
    return JSON.stringify(
      {
        endpoint: result.endpoint,
        variant: String(att.variant),
        accepted: result.accepted,
        attestation: result.attestation.ok ? 'valid' : result.attestation.error.message,
        ...(result.clusterId ? { clusterId: result.clusterId } : {}),
        measurements: rows,
      },
      null,
      2,
    );
  }
  const lines: string[] = [];
  if (result.pcrs) lines.push(formatMeasurementTable(rows));
  const snp = snpReportOf(result.document);
  if (snp) lines.push(formatSnpReport(snp, result.attestation));
  if (result.clusterId) {
    const c = result.clusterId;
    lines.push(`Cluster ID (PCR 15): ${c.ok ? 'matches' : 'MISMATCH'}`, `  expected ${c.expected}`, `  actual   ${c.actual ?? '(missing)'}`);
  }
  if (result.accepted) lines.push(`Node ${result.endpoint} is attested as ${String(att.variant)}${result.clusterId ? ' and belongs to the given cluster' : ''}: accepted.`);
  else if (!result.attestation.ok) lines.push(`Node ${result.endpoint} is refused: ${result.attestation.error.message}`);
  else lines.push(`Node ${result.endpoint} is refused: its PCR 15 does not carry the given cluster ID (not a member of this cluster, or not bootstrapped).`);
  return lines.join('\n');
}

/**
 * The config a running node is held to: its PCR 15 carries the cluster ID it was marked with (the
 * `--cluster-id` check compares it), not the zero the attestation config demands of a node that
 * is still to be initialised or joined.
 */
export function runningNodeConfig(att: AttestationConfig): AttestationConfig {
  if (!att.measurements.has(15)) return att;
  const measurements = Measurements.of([...att.measurements].filter(([index]) => index !== 15));
  return { ...att, measurements };
}

/** `asterism verify --endpoint`: a running node's verification service. Returns the exit code. */
export async function verifyEndpoint(
  att: AttestationConfig,
  opts: { endpoint: string; clusterId?: Buffer; timeoutMs: number; output: VerifyOutput },
  out: { stdout: (s: string) => void; stderr: (s: string) => void },
): Promise<number> {
  let result: RunningNodeResult;
  att = runningNodeConfig(att);
  try {
    result = await verifyRunningNode(new GrpcAttestationSource(), validatorFor(att), opts);
  } catch (err) {
    if (!(err instanceof VerifyNodeError)) throw err;
    out.stderr(`asterism verify: ${err.message}\n`);
    return err.code === 'NODE_UNREACHABLE' ? EXIT.unreachable : EXIT.usage;
  }
  out.stdout(`${renderRunningNode(result, att, opts.output)}\n`);
  return result.accepted ? EXIT.ok : EXIT.refused;
}
