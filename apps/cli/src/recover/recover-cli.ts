import { parseArgs } from 'node:util';
import { attestationConfig } from '../config/attestation-flags.js';
import { loadCliConfig } from '../config/cli-config.js';
import { EXIT, seconds, UsageError, withPort } from '../usage.js';
import { buildCliValidator, type CliValidatorOptions } from '../validators/cli-validator.js';
import { validatorOptions, VALIDATOR_FLAG_OPTIONS, VALIDATOR_FLAGS_USAGE } from '../validators/validator-flags.js';
import { GrpcRecoverConnector } from './grpc-recover-connector.js';
import { RecoverCommandError, runRecover, type RecoverFailureCode } from './recover-command.js';

/** Help text of `asterism recover`. */
export const RECOVER_USAGE = `Usage: asterism recover --endpoint <host[:port]> [--endpoint ...] --master-secret <file> [flags]

Recovers nodes whose state disk stays locked because no joinservice is up (e.g. every control
plane rebooted at once). For each endpoint: attests the node (aTLS, expected measurements from
the attestation config) and sends the cluster's master secret; the node derives its disk key,
checks it against its disk and unlocks. A wrong master secret is refused and changes nothing.

Flags:
  --endpoint <host[:port]>      a node waiting for recovery (port 9999 if omitted; repeatable)
  --master-secret <file>        the master secret file (asterism-mastersecret.json)
  --config <file>               config file (default ./asterism-conf.yaml if present)
  --variant <v>                 attestation variant of the nodes, e.g. qemu-vtpm
  --attestation-config <file>   JSON attestation config of the variant (expected measurements)
  --timeout <seconds>           how long to retry a node that does not serve yet (default 120)

${VALIDATOR_FLAGS_USAGE}

Exit codes: 0 every node recovered; 1 a node refused (attestation failed, wrong master secret,
not waiting for recovery); 2 usage, an unreadable master secret file or missing credentials;
3 a node unreachable.`;

const EXIT_FOR: Record<RecoverFailureCode, number> = {
  MASTER_SECRET_INVALID: EXIT.usage,
  NODE_UNREACHABLE: EXIT.unreachable,
  ATTESTATION_FAILED: EXIT.refused,
  NOT_WAITING: EXIT.refused,
  KEY_REFUSED: EXIT.refused,
  REQUEST_INVALID: EXIT.refused,
  RECOVER_FAILED: EXIT.refused,
};

/**
 * `asterism recover`: parses flags, recovers every endpoint, prints a per-node summary; returns
 * the exit code. `overrides` add validator options flags cannot express (tests: a stand-in Intel PKI).
 */
export async function recoverCommand(argv: string[], out: { stdout: (s: string) => void; stderr: (s: string) => void }, overrides: CliValidatorOptions = {}): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      endpoint: { type: 'string', multiple: true },
      'master-secret': { type: 'string' },
      ...VALIDATOR_FLAG_OPTIONS,
    },
  });
  if (values.help) {
    out.stdout(`${RECOVER_USAGE}\n`);
    return EXIT.ok;
  }
  if (!values.endpoint?.length) throw new UsageError('--endpoint is required');
  if (!values['master-secret']) throw new UsageError('--master-secret is required');
  const file = await loadCliConfig(values.config);
  const att = await attestationConfig(values, file);
  const retryForMs = seconds(values.timeout, 120) * 1000;
  const v = await buildCliValidator(att, { ...validatorOptions(values), ...overrides });
  let report;
  try {
    report = await runRecover(
      new GrpcRecoverConnector(v.validator),
      { endpoints: values.endpoint.map((e) => withPort(e, 9999)), masterSecretFile: values['master-secret'], retryForMs },
      (line) => out.stderr(`${line}\n`),
    );
  } catch (err) {
    if (err instanceof RecoverCommandError) {
      out.stderr(`asterism recover: ${err.message}\n`);
      return EXIT_FOR[err.code];
    }
    throw err;
  } finally {
    await v.close();
  }
  for (const r of report) out.stdout(`${r.endpoint}\t${r.ok ? 'recovered' : `FAILED (${r.error.code}): ${r.error.message}`}\n`);
  const failures = report.filter((r) => !r.ok);
  if (failures.length === 0) return EXIT.ok;
  return Math.max(...failures.map((f) => (f.ok ? EXIT.ok : EXIT_FOR[f.error.code])));
}
