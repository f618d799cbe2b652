/**
 * Extends one PCR of a running real node's vTPM (swtpm socket) with SHA256(label): simulates a
 * changed boot for the continuous-attestation acceptance (docs/protocol/continuous-attestation.md).
 * Usage: node --import tsx tools/local-cluster/src/real/extend-pcr-cli.ts <node> <pcr> [label] [--dir .local-cluster]
 */
import { join } from 'node:path';
import { extendNodePcr } from './vtpm-access.js';

const [node, pcrText, label = 'changed boot'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dirIdx = process.argv.indexOf('--dir');
const root = dirIdx > 0 ? process.argv[dirIdx + 1]! : join(process.cwd(), '.local-cluster');
const pcr = Number(pcrText);
if (!node || !Number.isInteger(pcr) || pcr < 0 || pcr > 23) {
  process.stderr.write('usage: extend-pcr-cli.ts <node> <pcr 0-23> [label] [--dir <cluster folder>]\n');
  process.exit(2);
}
const value = await extendNodePcr(root, node, pcr, label);
process.stdout.write(`${node}: PCR ${pcr} extended with SHA256("${label}"), now ${value}\n`);
