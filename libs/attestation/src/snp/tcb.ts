/**
 * TCB_VERSION of reports and V[CL]EK certificates (docs/protocol/sev-snp.md §3): one little-endian
 * u64 of security patch levels. Milan/Genoa: boot loader (byte 0), TEE (1), SNP firmware (6),
 * microcode (7). Turin: FMC (byte 0), boot loader (1), TEE (2), SNP firmware (3), microcode (7).
 * Other bytes are reserved.
 */
import type { TcbLayout } from './lines.js';

/** The SPL components of a TCB_VERSION; `fmc` only on Turin. */
export interface TcbVersion {
  readonly bootloader: number;
  readonly tee: number;
  readonly snp: number;
  readonly microcode: number;
  readonly fmc?: number;
}

/** Component names as used in messages and error details. */
export const TCB_COMPONENTS = ['fmc', 'bootloader', 'tee', 'snp', 'microcode'] as const;
export type TcbComponent = (typeof TCB_COMPONENTS)[number];

/** Decodes 8 bytes at `offset` in `layout` (reserved bytes ignored). */
export function decodeTcb(buf: Uint8Array, offset: number, layout: TcbLayout = 'legacy'): TcbVersion {
  if (layout === 'turin') return { fmc: buf[offset]!, bootloader: buf[offset + 1]!, tee: buf[offset + 2]!, snp: buf[offset + 3]!, microcode: buf[offset + 7]! };
  return { bootloader: buf[offset]!, tee: buf[offset + 1]!, snp: buf[offset + 6]!, microcode: buf[offset + 7]! };
}

/** Encodes a TCB_VERSION in `layout` (reserved bytes zero). */
export function encodeTcb(t: TcbVersion, layout: TcbLayout = 'legacy'): Buffer {
  const b = Buffer.alloc(8);
  if (layout === 'turin') {
    b[0] = t.fmc ?? 0;
    b[1] = t.bootloader;
    b[2] = t.tee;
    b[3] = t.snp;
  } else {
    b[0] = t.bootloader;
    b[1] = t.tee;
    b[6] = t.snp;
  }
  b[7] = t.microcode;
  return b;
}

const value = (t: TcbVersion, c: TcbComponent): number => (c === 'fmc' ? (t.fmc ?? 0) : t[c]);

/**
 * The first component in which `actual` is below `minimum`, or undefined when actual >= minimum
 * everywhere. A minimum without FMC does not constrain FMC.
 */
export function firstComponentBelow(actual: TcbVersion, minimum: TcbVersion): TcbComponent | undefined {
  return TCB_COMPONENTS.find((c) => (c !== 'fmc' || minimum.fmc !== undefined) && value(actual, c) < value(minimum, c));
}

/** The first component in which the two differ (FMC counts when either has it). */
export function firstComponentDiffering(a: TcbVersion, b: TcbVersion): TcbComponent | undefined {
  return TCB_COMPONENTS.find((c) => (c !== 'fmc' || a.fmc !== undefined || b.fmc !== undefined) && value(a, c) !== value(b, c));
}

/** The value of one component (FMC 0 when absent). */
export function tcbComponent(t: TcbVersion, c: TcbComponent): number {
  return value(t, c);
}

/** `bl2 tee0 snp6 ucode93` (Turin: `fmc1 bl1 tee1 snp4 ucode81`) - compact, for messages and the CLI. */
export function formatTcb(t: TcbVersion): string {
  return `${t.fmc === undefined ? '' : `fmc${t.fmc} `}bl${t.bootloader} tee${t.tee} snp${t.snp} ucode${t.microcode}`;
}

/** Plain object for error details and logs. */
export function tcbDetails(t: TcbVersion): Partial<Record<TcbComponent, number>> {
  return { ...(t.fmc === undefined ? {} : { fmc: t.fmc }), bootloader: t.bootloader, tee: t.tee, snp: t.snp, microcode: t.microcode };
}
