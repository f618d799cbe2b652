#!/usr/bin/env node
/**
 * The image tool's command line (tools/image/README.md):
 *   predict --image <node-image.raw> --out <dir> [--version <v>] [--record key=value ...]
 */
import { parseArgs } from 'node:util';
import { isAsterismError } from '@asterism/errors';
import { predictCommand } from './predict-command.js';

const USAGE = `Usage: tsx tools/image/src/cli.ts predict --image <node-image.raw> --out <dir> [--version <v>] [--record key=value ...]

Predicts the PCRs the node image's boot chain produces (from the image file alone) and writes
<dir>/attestation-config.json, <dir>/measurements.json and <dir>/prediction.json.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { image: { type: 'string' }, out: { type: 'string' }, version: { type: 'string' }, record: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals[0] !== 'predict' || !values.image || !values.out) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const p = await predictCommand({ image: values.image, out: values.out, records: values.record ?? [], ...(values.version ? { version: values.version } : {}) });
  for (const pcr of p.pcrs) process.stdout.write(`PCR ${String(pcr.index).padStart(2)} ${pcr.value.toString('hex')} ${pcr.enforced ? 'enforced' : 'warn-only'}\n`);
  process.stdout.write(`UKI ${p.uki.authenticodeSha256} cmdline: ${p.uki.cmdline}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`image: ${isAsterismError(err) ? `${err.code}: ${err.message}` : (err as Error).stack ?? String(err)}\n`);
    process.exit(isAsterismError(err) ? 1 : 70);
  },
);
