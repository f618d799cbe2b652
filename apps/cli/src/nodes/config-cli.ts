/**
 * `asterism config check|apply --attestation-config new.json`: the what-if against every node's
 * latest evidence, and applying a config that would not quarantine running nodes (or --force /
 * --warn-only) (docs/protocol/continuous-attestation.md).
 */
import { parseArgs } from 'node:util';
import { NodeStatusWriter } from '@asterism/node-attestation';
import { attestationConfig } from '../config/attestation-flags.js';
import { loadCliConfig } from '../config/cli-config.js';
import { EXIT, UsageError } from '../usage.js';
import { CLUSTER_FLAG_OPTIONS, CLUSTER_FLAGS_USAGE, clusterClients } from './cluster-access.js';
import { writeAttestationConfig } from './join-config.js';
import type { CommandOutput } from './node-cli.js';
import { formatWhatIf, whatIf, wouldQuarantine } from './what-if.js';

/** Help of `asterism config`. */
export const CONFIG_USAGE = `Usage: asterism config check --attestation-config <new.json> [flags]
       asterism config apply --attestation-config <new.json> [--force] [--warn-only|--enforce] [flags]

check: judges every node's latest evidence (stored by the attestation monitor) against the
proposed config and prints, per node, accept or refuse and why. Exit 1 if any node would be refused.
apply: the same check, then writes the config into join-config (the joinservice and the monitor
use it from then on). Refused if a running, not quarantined node would be refused, unless --force.
--warn-only sets the monitor to report refusals without quarantining; --enforce sets it back.

Flags:
  --attestation-config <file>   the proposed attestation config (JSON)
  --variant <v>                 attestation variant (default: the config file's)
  --config <file>               CLI config file (default ./asterism-conf.yaml if present)
${CLUSTER_FLAGS_USAGE}
  --force                       apply: even if running nodes would be refused
  --warn-only                   apply: monitor reports, does not quarantine
  --enforce                     apply: monitor quarantines (the default mode)`;

/** `asterism config check|apply`. */
export async function configCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      ...CLUSTER_FLAG_OPTIONS,
      config: { type: 'string' },
      variant: { type: 'string' },
      'attestation-config': { type: 'string' },
      force: { type: 'boolean' },
      'warn-only': { type: 'boolean' },
      enforce: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return out.stdout(`${CONFIG_USAGE}\n`), EXIT.ok;
  const [action, ...extra] = positionals;
  if ((action !== 'check' && action !== 'apply') || extra.length > 0) throw new UsageError('want: asterism config check|apply --attestation-config <file>');
  if (!values['attestation-config']) throw new UsageError('--attestation-config is required');
  if (values['warn-only'] && values.enforce) throw new UsageError('--warn-only and --enforce exclude each other');
  if (action === 'check' && (values.force || values['warn-only'] || values.enforce)) throw new UsageError('--force, --warn-only and --enforce are flags of apply');
  const proposed = await attestationConfig(values, await loadCliConfig(values.config));
  const core = clusterClients(values).core;
  const rows = whatIf(await new NodeStatusWriter(core).list(), proposed);
  out.stdout(`${formatWhatIf(rows)}\n`);
  const refused = wouldQuarantine(rows);
  if (action === 'check') return rows.some((r) => r.outcome === 'refuse') ? EXIT.refused : EXIT.ok;
  if (refused.length > 0 && !values.force && !values['warn-only']) {
    out.stderr(`asterism config apply: refused, the config would quarantine running nodes: ${refused.map((r) => r.node).join(', ')} (pass --warn-only to report first, or --force)\n`);
    return EXIT.refused;
  }
  const mode = values['warn-only'] ? 'warn' : values.enforce ? 'enforce' : undefined;
  await writeAttestationConfig(core, proposed.json, mode);
  out.stdout(`Attestation config applied${mode ? `, monitor mode ${mode}` : ''}${refused.length ? ` (${refused.length} node(s) would be refused: ${mode === 'warn' ? 'reported, not quarantined' : 'forced'})` : ''}.\n`);
  return EXIT.ok;
}
