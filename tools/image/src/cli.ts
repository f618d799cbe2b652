#!/usr/bin/env node
/**
 * The image tool's command line (tools/image/README.md):
 *   predict --image <node-image.raw> --out <dir> [--version <v>] [--record key=value ...]
 *   boot --image <node-image.raw> --dir <dir> [--until <regex>] [--timeout <s>]
 */
import { parseArgs } from 'node:util';
import { isAsterismError } from '@asterism/errors';
import { predictCommand } from './predict-command.js';
import { Vm } from './vm/vm.js';

const USAGE = `Usage: tsx tools/image/src/cli.ts predict --image <node-image.raw> --out <dir> [--version <v>] [--record key=value ...]

       tsx tools/image/src/cli.ts boot --image <node-image.raw> --dir <dir> [--until <regex>] [--timeout <s>]

predict: computes the PCRs the node image's boot chain produces (from the image file alone) and
writes <dir>/attestation-config.json, <dir>/measurements.json and <dir>/prediction.json.
boot: boots the image without network under QEMU (TCG, OVMF, swtpm) until the serial console
(<dir>/console.log) matches --until (default: the PCR lines), then stops it.`;

/** \`boot\`: one VM without network until its console matches \`until\`. */
async function bootCommand(image: string, dir: string, until: string, timeoutS: number): Promise<number> {
  const vm = await Vm.boot({ image, dir });
  try {
    await vm.waitForConsole(new RegExp(until), timeoutS * 1000);
    process.stdout.write(`console matched /${until}/ after ${((Date.now() - vm.startedAt) / 1000).toFixed(1)} s wall (log: ${vm.consolePath})\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 1;
  } finally {
    await vm.stop();
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      image: { type: 'string' },
      out: { type: 'string' },
      dir: { type: 'string' },
      until: { type: 'string' },
      timeout: { type: 'string' },
      version: { type: 'string' },
      record: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals[0] === 'boot' && values.image && values.dir) return bootCommand(values.image, values.dir, values.until ?? 'asterism-uptime', Number(values.timeout ?? 300));
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
