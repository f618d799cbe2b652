/**
 * Predicts the PCRs the node image's boot chain produces (docs/protocol/node-image.md "What is
 * measured where"), from the image file alone:
 * - PCR 4: the firmware's "Calling EFI Application from Boot Option" action, its separator, the
 *   Authenticode hash of the UKI it starts, then that of the kernel (`.linux`), which systemd
 *   252's stub starts through the firmware's LoadImage (checked against a booted VM's PCR 4).
 * - PCR 5: the separator, the GPT of the boot disk, and the two ExitBootServices actions.
 * - PCR 9: the 6.1 kernel's EFI stub measures its load options (the stub passes the command line
 *   as UTF-16LE with its terminating NUL), then the initrd it loads from the stub.
 * - PCR 11: the UKI sections as systemd-stub measures them.
 * - PCRs 8, 12, 13 stay zero (no boot loader, no command-line override, credentials or system
 *   extensions); PCR 15 is zero until the bootstrapper marks the node (docs/protocol/node-lock.md).
 */
import { type Gpt, uefiGptData } from '../disk/gpt.js';
import { authenticodeSha256, parsePe } from './pe.js';
import { replay, SEPARATOR_DIGEST, sha256 } from './pcr.js';
import { stubPcr11Digests, ukiParts, type UkiParts } from './uki.js';

/** The firmware's action before it starts a boot option's application (TCG PC Client spec). */
export const CALLING_EFI_APPLICATION = 'Calling EFI Application from Boot Option';
/** The firmware's actions around ExitBootServices, in PCR 5. */
export const EXIT_BOOT_SERVICES = ['Exit Boot Services Invocation', 'Exit Boot Services Returned with Success'] as const;

/** One predicted register. */
export interface PredictedPcr {
  readonly index: number;
  readonly value: Buffer;
  /** True: a mismatch fails attestation; false: the value depends on more than the image (warn only). */
  readonly enforced: boolean;
  /** What went into it, for the report. */
  readonly events: readonly string[];
  /**
   * The SHA-256 digests extended, in order (`value` is their replay from zero); empty for a zero
   * register. A simulated measured boot replays them (tools/local-cluster's namespace nodes).
   */
  readonly digests: readonly Buffer[];
}

/** The prediction of one image. */
export interface Prediction {
  readonly pcrs: readonly PredictedPcr[];
  readonly uki: {
    readonly authenticodeSha256: string;
    readonly kernelAuthenticodeSha256: string;
    readonly cmdline: string;
    readonly osrel: string;
    readonly initrdSha256: string;
    readonly linuxSha256: string;
  };
}

const zero = (index: number, why: string): PredictedPcr => ({ index, value: Buffer.alloc(32), enforced: true, events: [why], digests: [] });

/** A register extended with `digests` from zero. */
const replayed = (index: number, enforced: boolean, digests: Buffer[], events: string[]): PredictedPcr => ({ index, value: replay(digests), enforced, events, digests });

/** Predicts the PCRs for a UKI booted by OVMF from a disk with this GPT. */
export function predictPcrs(ukiBytes: Buffer, gpt: Gpt): Prediction {
  const pe = parsePe(ukiBytes);
  const parts: UkiParts = ukiParts(pe);
  const peHash = authenticodeSha256(pe);
  const kernelHash = authenticodeSha256(parsePe(parts.linux));
  const loadOptions = sha256(Buffer.from(`${parts.cmdline}\0`, 'utf16le'));
  const initrd = sha256(parts.initrd);
  const pcrs: PredictedPcr[] = [
    replayed(4, true, [sha256(CALLING_EFI_APPLICATION), SEPARATOR_DIGEST, peHash, kernelHash], [
      `EV_EFI_ACTION "${CALLING_EFI_APPLICATION}"`,
      'EV_SEPARATOR',
      `EV_EFI_BOOT_SERVICES_APPLICATION (UKI) ${peHash.toString('hex')}`,
      `EV_EFI_BOOT_SERVICES_APPLICATION (kernel) ${kernelHash.toString('hex')}`,
    ]),
    replayed(5, false, [SEPARATOR_DIGEST, sha256(uefiGptData(gpt)), ...EXIT_BOOT_SERVICES.map((a) => sha256(a))], ['EV_SEPARATOR', 'EV_EFI_GPT_EVENT', ...EXIT_BOOT_SERVICES.map((a) => `EV_EFI_ACTION "${a}"`)]),
    zero(8, 'no boot loader measures a command line'),
    replayed(9, true, [loadOptions, initrd], [`EV_EVENT_TAG "LOADED_IMAGE::LoadOptions" ${loadOptions.toString('hex')}`, `EV_EVENT_TAG "Linux initrd" ${initrd.toString('hex')}`]),
    replayed(11, true, stubPcr11Digests(parts), [...parts.sections.keys()].filter((n) => n !== '.pcrsig').map((n) => `EV_IPL ${n}`)),
    zero(12, 'no command-line override or credentials'),
    zero(13, 'no system extensions'),
    zero(15, 'cluster ID: zero until the node is marked'),
  ];
  return {
    pcrs,
    uki: {
      authenticodeSha256: peHash.toString('hex'),
      kernelAuthenticodeSha256: kernelHash.toString('hex'),
      cmdline: parts.cmdline,
      osrel: parts.osrel,
      initrdSha256: initrd.toString('hex'),
      linuxSha256: sha256(parts.linux).toString('hex'),
    },
  };
}
