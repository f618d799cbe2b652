/**
 * The processor line a report comes from (docs/protocol/sev-snp.md §4). Asterism verifies Milan,
 * Genoa and Turin (each with its own AMD root, KDS path and TCB layout: ./lines.ts); every other
 * line is refused clearly instead of failing later with a confusing chain or TCB error.
 */
import { AttestationError } from '../errors.js';
import { AMD_PRODUCT_LINES, type AmdProductLine } from './lines.js';
import type { SnpReport } from './report.js';

/** Processor lines we can name. */
export type SnpProductLine = AmdProductLine | 'Bergamo/Siena' | 'unknown';

/** The line named by CPUID family/model; undefined CPUID (v2 or zero) means Milan. */
export function productLineOf(cpuid: SnpReport['cpuid']): SnpProductLine {
  if (!cpuid) return 'Milan';
  if (cpuid.family === 0x19) {
    if (cpuid.model <= 0x0f) return 'Milan';
    if (cpuid.model >= 0x10 && cpuid.model <= 0x1f) return 'Genoa';
    if (cpuid.model >= 0xa0 && cpuid.model <= 0xaf) return 'Bergamo/Siena';
  }
  if (cpuid.family === 0x1a && cpuid.model <= 0x1f) return 'Turin';
  return 'unknown';
}

/** The product lines this build verifies. */
export const SUPPORTED_PRODUCT_LINES: readonly SnpProductLine[] = AMD_PRODUCT_LINES;

/** Throws PRODUCT_UNSUPPORTED unless the report comes from a supported line; returns the line. */
export function requireSupportedProduct(report: Pick<SnpReport, 'cpuid'>): AmdProductLine {
  const line = productLineOf(report.cpuid);
  if ((AMD_PRODUCT_LINES as readonly string[]).includes(line)) return line as AmdProductLine;
  const c = report.cpuid!;
  const hex = (n: number) => `0x${n.toString(16)}`;
  throw new AttestationError(
    'PRODUCT_UNSUPPORTED',
    `SNP report comes from an AMD ${line} processor (CPUID family ${hex(c.family)} model ${hex(c.model)} stepping ${hex(c.stepping)}); supported: ${SUPPORTED_PRODUCT_LINES.join(', ')}`,
    { details: { field: 'cpuid', expected: SUPPORTED_PRODUCT_LINES, actual: line, family: c.family, model: c.model, stepping: c.stepping } },
  );
}
