/**
 * GCE platform events for gcp-sev-es tests (docs/protocol/cloud-vtpm-variants.md §4): a
 * crypto-agile event log (SHA-1 + SHA-256) with the firmware version (EV_S_CRTM_VERSION) and the
 * SEV technology (EV_NONHOST_INFO) in PCR 0, and the measuring of the same events into a TPM.
 */
import { createHash } from 'node:crypto';
import { TPM_ALG, type TpmClient } from '@asterism/tpm';
import { EV_NONHOST_INFO, EV_S_CRTM_VERSION } from './platform-state.js';

/** The event log of a GCE VM using `technology` (GCE_TECHNOLOGY), and the event data to extend into PCR 0. */
export function gceEventLog(technology: number, firmware = 'GCE Virtual Firmware v2'): { log: Buffer; events: Buffer[] } {
  const u32 = (n: number) => Buffer.from(Uint32Array.of(n).buffer);
  const header = Buffer.from(
    '000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000',
    'hex',
  );
  const crtm = Buffer.from(`${firmware}\0`, 'utf16le');
  const nonHost = Buffer.concat([Buffer.from('GCE NonHostInfo\0', 'latin1'), Buffer.from([technology]), Buffer.alloc(15)]);
  const event = (type: number, data: Buffer) =>
    Buffer.concat([u32(0), u32(type), u32(2), Buffer.from([0x04, 0x00]), createHash('sha1').update(data).digest(), Buffer.from([0x0b, 0x00]), createHash('sha256').update(data).digest(), u32(data.length), data]);
  return { log: Buffer.concat([header, event(EV_S_CRTM_VERSION, crtm), event(EV_NONHOST_INFO, nonHost)]), events: [crtm, nonHost] };
}

/** Extends PCR 0 (SHA-1 and SHA-256 banks) with each event's data, as the firmware measures them. */
export async function measureGceEvents(c: TpmClient, events: Buffer[]): Promise<void> {
  for (const data of events) {
    await c.pcrExtend(0, [
      { hashAlg: TPM_ALG.SHA1, digest: createHash('sha1').update(data).digest() },
      { hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update(data).digest() },
    ]);
  }
}
