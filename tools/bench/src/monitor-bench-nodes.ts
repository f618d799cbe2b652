/**
 * The "nodes" of monitor-bench.ts in their own process (so their CPU is not the monitor's): N
 * verify.API servers on loopback answering with the dummy variant, and optionally one qemu-vtpm
 * node on swtpm. Prints one JSON line `{dummy: [endpoints], vtpm?: endpoint, clusterPcr?: ...}` and
 * runs until killed.
 */
import { DummyIssuer, QemuVtpmIssuer } from '@asterism/attestation';
import { startVerifyServer } from '@asterism/node-attestation/testing';
import { startSwtpm } from '@asterism/tpm/testing';

const n = Number(process.argv[2] ?? 100);
const withVtpm = process.argv[3] === 'vtpm';
const MIN_EVENT_LOG = Buffer.from(
  '000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000',
  'hex',
);
const dummy: string[] = [];
for (let i = 0; i < n; i++) dummy.push((await startVerifyServer(new DummyIssuer())).endpoint);
let vtpm: string | undefined;
if (withVtpm) {
  const tpm = await startSwtpm();
  vtpm = (await startVerifyServer(new QemuVtpmIssuer(() => tpm.client(), async () => MIN_EVENT_LOG))).endpoint;
  process.on('SIGTERM', () => void tpm.stop().then(() => process.exit(0)));
}
process.stdout.write(`${JSON.stringify({ dummy, vtpm })}\n`);
setInterval(() => undefined, 1 << 30);
