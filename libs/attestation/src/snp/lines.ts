/**
 * The AMD EPYC product lines Asterism verifies SEV-SNP evidence of (docs/protocol/sev-snp.md §4)
 * and what differs between them: certificate names, the TCB_VERSION layout, the length of the
 * hardware ID a VCEK is issued for (and addressed by at AMD's KDS).
 */

/** Product lines with their own AMD root (ARK) and KDS path. */
export type AmdProductLine = 'Milan' | 'Genoa' | 'Turin';

/** Every verifiable line, oldest first. */
export const AMD_PRODUCT_LINES: readonly AmdProductLine[] = ['Milan', 'Genoa', 'Turin'];

/** How a TCB_VERSION is laid out: Milan/Genoa (no FMC) or Turin (FMC at byte 0). */
export type TcbLayout = 'legacy' | 'turin';

/** The certificate common names of one line's hierarchy. */
export interface AmdNames {
  readonly ark: string;
  readonly ask: string;
  readonly asvk: string;
  readonly vcek: 'SEV-VCEK';
  readonly vlek: 'SEV-VLEK';
}

/** Certificate names of a line: ARK-<line>, SEV-<line> (ASK), SEV-VLEK-<line> (ASVK). */
export function amdNames(line: AmdProductLine): AmdNames {
  return { ark: `ARK-${line}`, ask: `SEV-${line}`, asvk: `SEV-VLEK-${line}`, vcek: 'SEV-VCEK', vlek: 'SEV-VLEK' };
}

/** The TCB layout of a line. */
export function tcbLayoutOf(line: AmdProductLine): TcbLayout {
  return line === 'Turin' ? 'turin' : 'legacy';
}

/** Bytes of the hardware ID a VCEK carries (HWID extension) and KDS is asked with: CHIP_ID, or its first 8 bytes on Turin. */
export function hwidLength(line: AmdProductLine): 64 | 8 {
  return line === 'Turin' ? 8 : 64;
}

/** The line whose ARK/ASK/ASVK has this common name, if any. */
export function lineOfCommonName(cn: string): AmdProductLine | undefined {
  return AMD_PRODUCT_LINES.find((l) => {
    const n = amdNames(l);
    return cn === n.ark || cn === n.ask || cn === n.asvk;
  });
}
