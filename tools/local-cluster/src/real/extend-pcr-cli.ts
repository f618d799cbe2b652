/**
 * Extends one PCR of a running real node's vTPM (swtpm socket) with SHA256(label): simulates a
 * changed boot for the continuous-attestation acceptance (docs/protocol/continuous-attestation.md).
 * Usage: node --import tsx tools/local-cluster/src/real/extend-pcr-cli.ts <node> <pcr> [label] [--dir .local-cluster]
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { SocketTransport, TPM_ALG, TpmClient } from '@asterism/tpm';
import { ClusterLayout } from '../layout.js';

const [node, pcrText, label = 'changed boot'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dirIdx = process.argv.indexOf('--dir');
const root = dirIdx > 0 ? process.argv[dirIdx + 1]! : join(process.cwd(), '.local-cluster');
const pcr = Number(pcrText);
if (!node || !Number.isInteger(pcr) || pcr < 0 || pcr > 23) {
  process.stderr.write('usage: extend-pcr-cli.ts <node> <pcr 0-23> [label] [--dir <cluster folder>]\n');
  process.exit(2);
}
const tpm = new TpmClient(await SocketTransport.connect({ path: new ClusterLayout(root).tpmSocket(node) }));
try {
  await tpm.pcrExtend(pcr, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update(label).digest() }]);
  const value = (await tpm.pcrRead([pcr])).get(pcr)!;
  process.stdout.write(`${node}: PCR ${pcr} extended with SHA256("${label}"), now ${Buffer.from(value).toString('hex')}\n`);
} finally {
  await tpm.transport.close();
}
