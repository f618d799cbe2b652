import { createHash } from 'node:crypto';
import { CLUSTER_ID_PCR } from '@asterism/nodelock';
import { SocketTransport, softwareExtend, TPM_ALG, TpmClient } from '@asterism/tpm';

/** What a local node's "firmware" measures at boot: PCR -> event labels, extended in order. */
export const BOOT_MEASUREMENTS: Record<number, string[]> = {
  4: ['asterism-local bootloader', 'asterism-local kernel'],
  9: ['asterism-local initrd', 'asterism-local kernel command line'],
  11: ['asterism-local unified kernel image'],
};

const digest = (label: string) => createHash('sha256').update(label).digest();

/** The SHA-256 PCR values a correctly booted local node has (what the joinservice expects). */
export function expectedBootPcrs(): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (const [pcr, labels] of Object.entries(BOOT_MEASUREMENTS)) {
    out.set(Number(pcr), labels.reduce<Buffer>((acc, l) => softwareExtend(acc, digest(l)), Buffer.alloc(32)));
  }
  return out;
}

/**
 * The attestation config (qemu-vtpm JSON) enforcing the boot PCRs and PCR 15 = 0: a node that was
 * already initialised or joined (PCR 15 extended with a cluster ID) must not get a join ticket.
 */
export function attestationConfigJson(): string {
  const pcrs = new Map(expectedBootPcrs()).set(CLUSTER_ID_PCR, Buffer.alloc(32));
  const m = Object.fromEntries([...pcrs].map(([pcr, v]) => [String(pcr), { expected: v.toString('hex'), warnOnly: false }]));
  return `${JSON.stringify({ measurements: m }, null, 2)}\n`;
}

/**
 * Simulates measured boot on a node's swtpm: extends the boot PCRs like firmware would: the
 * digests of `events` (a node image's predicted events, docs/adr/0039-vm-nodes-local-cluster.md)
 * or else those of {@link BOOT_MEASUREMENTS}. `tamper` adds one unexpected measurement to PCR 9
 * (a modified initrd).
 */
export async function measureBoot(tpmSocket: string, opts: { tamper?: boolean; events?: ReadonlyMap<number, readonly Buffer[]> } = {}): Promise<void> {
  const tpm = new TpmClient(await SocketTransport.connect({ path: tpmSocket }));
  const events = opts.events ?? new Map(Object.entries(BOOT_MEASUREMENTS).map(([pcr, labels]) => [Number(pcr), labels.map(digest)]));
  try {
    await tpm.startup('clear');
    for (const [pcr, digests] of events) {
      for (const d of digests) await tpm.pcrExtend(pcr, [{ hashAlg: TPM_ALG.SHA256, digest: d }]);
    }
    if (opts.tamper) await tpm.pcrExtend(9, [{ hashAlg: TPM_ALG.SHA256, digest: digest('malicious initrd module') }]);
  } finally {
    await tpm.transport.close();
  }
}
