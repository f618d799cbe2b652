/**
 * TCB_VERSION of Milan/Genoa reports and V[CL]EK certificates (docs/protocol/sev-snp.md §3):
 * boot loader, TEE, SNP firmware and microcode security patch levels in one little-endian u64.
 */

/** The four SPL components of a TCB_VERSION. */
export interface TcbVersion {
  readonly bootloader: number;
  readonly tee: number;
  readonly snp: number;
  readonly microcode: number;
}

/** Component names as used in messages and error details. */
export const TCB_COMPONENTS = ['bootloader', 'tee', 'snp', 'microcode'] as const;
export type TcbComponent = (typeof TCB_COMPONENTS)[number];

/** Decodes 8 bytes at `offset` (bytes 2-5 are reserved and ignored). */
export function decodeTcb(buf: Uint8Array, offset: number): TcbVersion {
  return { bootloader: buf[offset]!, tee: buf[offset + 1]!, snp: buf[offset + 6]!, microcode: buf[offset + 7]! };
}

/** Encodes a TCB_VERSION (reserved bytes zero). */
export function encodeTcb(t: TcbVersion): Buffer {
  const b = Buffer.alloc(8);
  b[0] = t.bootloader;
  b[1] = t.tee;
  b[6] = t.snp;
  b[7] = t.microcode;
  return b;
}

/** The first component in which `actual` is below `minimum`, or undefined when actual >= minimum everywhere. */
export function firstComponentBelow(actual: TcbVersion, minimum: TcbVersion): TcbComponent | undefined {
  return TCB_COMPONENTS.find((c) => actual[c] < minimum[c]);
}

/** The first component in which the two differ. */
export function firstComponentDiffering(a: TcbVersion, b: TcbVersion): TcbComponent | undefined {
  return TCB_COMPONENTS.find((c) => a[c] !== b[c]);
}

/** `bl2 tee0 snp6 ucode93` - compact, for messages and the CLI. */
export function formatTcb(t: TcbVersion): string {
  return `bl${t.bootloader} tee${t.tee} snp${t.snp} ucode${t.microcode}`;
}

/** Plain object for error details and logs. */
export function tcbDetails(t: TcbVersion): Record<TcbComponent, number> {
  return { bootloader: t.bootloader, tee: t.tee, snp: t.snp, microcode: t.microcode };
}
