import type { AttestationConfig } from '@asterism/attestation';
import { Measurements, PCR_INDEX_CLUSTER_ID, TDX_INDEX_CLUSTER_ID, variantDescriptor } from '@asterism/attestation';
import { EXIT } from '../usage.js';
import type { CliValidator } from '../validators/cli-validator.js';
import { GrpcAttestationSource } from './grpc-attestation-source.js';
import { formatMeasurementTable, measurementRows } from './report.js';
import { formatSnpReport, snpReportOf } from './snp-report.js';
import { formatTdxReport, tdBodyOf, type RecordingTdxVerifier } from './tdx-report.js';
import { verifyRunningNode, VerifyNodeError, type RunningNodeResult } from './running-node.js';

/** Output formats of `asterism verify`. */
export type VerifyOutput = 'table' | 'json' | 'raw';

/** Renders a running node's verification result in the chosen format (`dcap`: the TDX quote's DCAP outcome, if any). */
export function renderRunningNode(result: RunningNodeResult, att: AttestationConfig, output: VerifyOutput, dcap?: RecordingTdxVerifier['last']): string {
  if (output === 'raw') return Buffer.from(result.document).toString('utf8');
  const registers = result.pcrs ?? result.tdMeasurements;
  const rows = registers ? measurementRows(att.measurements, registers) : [];
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
  if (registers) lines.push(formatMeasurementTable(rows, result.pcrs ? 'PCR' : 'TDX index'));
  const snp = snpReportOf(result.document);
  if (snp) lines.push(formatSnpReport(snp, result.attestation));
  const td = tdBodyOf(result.document);
  if (td) lines.push(formatTdxReport(td, dcap));
  if (result.clusterId) {
    const c = result.clusterId;
    lines.push(`Cluster ID (${c.register}): ${c.ok ? 'matches' : 'MISMATCH'}`, `  expected ${c.expected}`, `  actual   ${c.actual ?? '(missing)'}`);
  }
  if (result.accepted) lines.push(`Node ${result.endpoint} is attested as ${String(att.variant)}${result.clusterId ? ' and belongs to the given cluster' : ''}: accepted.`);
  else if (!result.attestation.ok) lines.push(`Node ${result.endpoint} is refused: ${result.attestation.error.message}`);
  else lines.push(`Node ${result.endpoint} is refused: its ${result.clusterId?.register ?? 'PCR 15'} does not carry the given cluster ID (not a member of this cluster, or not bootstrapped).`);
  return lines.join('\n');
}

/**
 * The config a running node is held to: its cluster-ID register (PCR 15, or RTMR2 = TDX index 3
 * on qemu-tdx) carries the mark of the cluster it joined (the `--cluster-id` check compares it),
 * not the zero the attestation config demands of a node that is still to be initialised or joined.
 */
export function runningNodeConfig(att: AttestationConfig): AttestationConfig {
  const markIndex = variantDescriptor(att.variant).platform === 'tdx' ? TDX_INDEX_CLUSTER_ID : PCR_INDEX_CLUSTER_ID;
  if (!att.measurements.has(markIndex)) return att;
  const measurements = Measurements.of([...att.measurements].filter(([index]) => index !== markIndex));
  return { ...att, measurements };
}

/**
 * `asterism verify --endpoint`: a running node's verification service, validated by `build`'s
 * validator for the running-node config. Returns the exit code.
 */
export async function verifyEndpoint(
  att: AttestationConfig,
  opts: { endpoint: string; clusterId?: Buffer; timeoutMs: number; output: VerifyOutput },
  out: { stdout: (s: string) => void; stderr: (s: string) => void },
  build: (att: AttestationConfig) => Promise<CliValidator>,
): Promise<number> {
  att = runningNodeConfig(att);
  const v = await build(att);
  let result: RunningNodeResult;
  try {
    result = await verifyRunningNode(new GrpcAttestationSource(), v.validator, opts);
  } catch (err) {
    if (!(err instanceof VerifyNodeError)) throw err;
    out.stderr(`asterism verify: ${err.message}\n`);
    return err.code === 'NODE_UNREACHABLE' ? EXIT.unreachable : EXIT.usage;
  } finally {
    await v.close();
  }
  out.stdout(`${renderRunningNode(result, att, opts.output, v.tdx.last)}\n`);
  return result.accepted ? EXIT.ok : EXIT.refused;
}
