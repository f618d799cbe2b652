import { parseArgs } from 'node:util';
import { init } from '@asterism/proto';
import { atlsChannelCredentials } from '@asterism/atls';
import type { AttestationConfig } from '@asterism/attestation';
import { attestationConfig } from '../config/attestation-flags.js';
import { loadCliConfig } from '../config/cli-config.js';
import { EXIT, seconds, UsageError, withPort } from '../usage.js';
import { buildCliValidator, type CliValidatorOptions } from '../validators/cli-validator.js';
import { validatorOptions, VALIDATOR_FLAG_OPTIONS, VALIDATOR_FLAGS_USAGE } from '../validators/validator-flags.js';
import { RecordingValidator } from './recording-validator.js';
import { formatMeasurementTable, measurementRows } from './report.js';
import { parseClusterId } from './running-node.js';
import { formatSnpReport, snpReportOf } from './snp-report.js';
import { formatTdxReport, tdBodyOf } from './tdx-report.js';
import { verifyEndpoint } from './verify-endpoint.js';

/** Help text of `asterism verify`. */
export const VERIFY_USAGE = `Usage: asterism verify (--endpoint <host[:port]> | --node <host[:port]>) [flags]

--endpoint: a running node's verification service (plain gRPC, port 30081 if omitted): asks for
an attestation document over a fresh nonce, validates it and prints every PCR, expected vs actual;
with --cluster-id also checks that the node carries that cluster ID (PCR 15; RTMR2 on qemu-tdx).
--node: a node that is not initialised yet: its InitServer (aTLS, port 9000 if omitted).

TDX nodes: MRTD and RTMR0..3 as indices 0..4, the TCB status from Intel's collateral, or the
failing check.

Flags:
  --endpoint <host[:port]>      a running node's verification service
  --node <host[:port]>          a fresh node's InitServer
  --cluster-id <id>             expected cluster ID (base64 as in asterism-id.json, or hex); --endpoint only
  -o, --output <f>              table (default), json, or raw (the attestation document); --endpoint only
  --config <file>               config file (default ./asterism-conf.yaml if present)
  --variant <v>                 attestation variant, e.g. qemu-vtpm
  --attestation-config <file>   JSON attestation config with the expected measurements
  --timeout <seconds>           connection timeout (default 30)

${VALIDATOR_FLAGS_USAGE}

Exit codes: 0 accepted; 1 refused (measurements, attestation or cluster ID); 2 usage or missing
credentials; 3 unreachable.`;

/** Output streams of a command. */
export interface CommandOutput {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

/** Parses the flags of `asterism verify` (strict). */
function parseVerifyFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    options: {
      node: { type: 'string' },
      endpoint: { type: 'string' },
      'cluster-id': { type: 'string' },
      output: { type: 'string', short: 'o' },
      ...VALIDATOR_FLAG_OPTIONS,
    },
  }).values;
}

/**
 * `asterism verify`: a running node (`--endpoint`) or a fresh one (`--node`). `overrides` add
 * validator options flags cannot express (tests: a stand-in Intel PKI). Returns the exit code.
 */
export async function verifyCommand(argv: string[], out: CommandOutput, overrides: CliValidatorOptions = {}): Promise<number> {
  const values = parseVerifyFlags(argv);
  if (values.help) {
    out.stdout(`${VERIFY_USAGE}\n`);
    return EXIT.ok;
  }
  const file = await loadCliConfig(values.config);
  if (!values.node === !values.endpoint) throw new UsageError('exactly one of --endpoint (a running node) and --node (a fresh node) is required');
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json' && output !== 'raw') throw new UsageError(`unknown --output "${output}": want table, json or raw`);
  if (values.node && (values['cluster-id'] || values.output)) throw new UsageError('--cluster-id and --output need --endpoint (a running node)');
  const clusterId = values['cluster-id'] === undefined ? undefined : parseClusterId(values['cluster-id']);
  const att = await attestationConfig(values, file);
  const options = { ...validatorOptions(values), ...overrides };
  const timeoutMs = seconds(values.timeout, 30) * 1000;
  if (values.endpoint) {
    return verifyEndpoint(att, { endpoint: withPort(values.endpoint, 30081), ...(clusterId ? { clusterId } : {}), timeoutMs, output }, out, (a) => buildCliValidator(a, options));
  }
  return verifyFreshNode(att, withPort(values.node!, 9000), timeoutMs, options, out);
}

/** `--node`: attests the InitServer's aTLS certificate (no RPC is sent) and prints the report. */
async function verifyFreshNode(att: AttestationConfig, target: string, timeoutMs: number, options: CliValidatorOptions, out: CommandOutput): Promise<number> {
  const v = await buildCliValidator(att, options);
  const recorder = new RecordingValidator(v.validator);
  const client = new init.APIClient(target, atlsChannelCredentials({ validators: [recorder] }));
  const deadline = Date.now() + timeoutMs;
  try {
    // Connecting runs the aTLS handshake and the validation.
    while (!recorder.outcome && Date.now() < deadline) {
      await new Promise<void>((resolve) => client.waitForReady(Math.min(deadline, Date.now() + 2000), () => resolve()));
    }
  } finally {
    client.close();
    await v.close();
  }
  if (!recorder.outcome) {
    out.stderr(`asterism verify: no attested connection to ${target} within the timeout\n`);
    return EXIT.unreachable;
  }
  if (recorder.pcrs) out.stdout(`${formatMeasurementTable(measurementRows(att.measurements, recorder.pcrs))}\n`);
  const tdBody = recorder.document ? tdBodyOf(recorder.document) : undefined;
  if (tdBody) out.stdout(`${formatTdxReport(tdBody, v.tdx.last)}\n`);
  const snpReport = recorder.document ? snpReportOf(recorder.document) : undefined;
  if (snpReport) out.stdout(`${formatSnpReport(snpReport, recorder.outcome)}\n`);
  if (recorder.outcome.ok) {
    out.stdout(`Node ${target} is attested as ${att.variant}: accepted.\n`);
    return EXIT.ok;
  }
  out.stdout(`Node ${target} is refused: ${recorder.outcome.error.message}\n`);
  return EXIT.refused;
}
