/**
 * The processor line a report comes from (docs/protocol/sev-snp.md §4). Asterism verifies Milan
 * only (AMD roots, KDS paths and TCB layout differ per line); every other line is refused
 * clearly instead of failing later with a confusing chain or TCB error.
 */
import { AttestationError } from '../errors.js';
import type { SnpReport } from './report.js';

/** Processor lines we can name. */
export type SnpProductLine = 'Milan' | 'Genoa' | 'Bergamo/Siena' | 'Turin' | 'unknown';

/** The line named by CPUID family/model; undefined CPUID (v2 or zero) means Milan. */
export function productLineOf(cpuid: SnpReport['cpuid']): SnpProductLine {
  if (!cpuid) return 'Milan';
  if (cpuid.family === 0x19) {
    if (cpuid.model <= 0x0f) return 'Milan';
    if (cpuid.model >= 0x10 && cpuid.model <= 0x1f) return 'Genoa';
    if (cpuid.model >= 0xa0 && cpuid.model <= 0xaf) return 'Bergamo/Siena';
  }
  if (cpuid.family === 0x1a) return 'Turin';
  return 'unknown';
}

/** The product lines this build verifies. */
export const SUPPORTED_PRODUCT_LINES: readonly SnpProductLine[] = ['Milan'];

/** Throws PRODUCT_UNSUPPORTED unless the report comes from a supported line; returns the line. */
export function requireSupportedProduct(report: SnpReport): SnpProductLine {
  const line = productLineOf(report.cpuid);
  if (SUPPORTED_PRODUCT_LINES.includes(line)) return line;
  const c = report.cpuid!;
  const hex = (n: number) => `0x${n.toString(16)}`;
  throw new AttestationError(
    'PRODUCT_UNSUPPORTED',
    `SNP report comes from an AMD ${line} processor (CPUID family ${hex(c.family)} model ${hex(c.model)} stepping ${hex(c.stepping)}); only ${SUPPORTED_PRODUCT_LINES.join(', ')} is supported`,
    { details: { field: 'cpuid', expected: SUPPORTED_PRODUCT_LINES, actual: line, family: c.family, model: c.model, stepping: c.stepping } },
  );
}
