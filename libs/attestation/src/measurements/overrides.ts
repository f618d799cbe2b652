/**
 * Post-processing of freshly generated image measurements (docs/protocol/measurements.md `ApplyOverrides`): some
 * PCRs get fixed values (they vary per boot or per CSP firmware in ways the generator cannot
 * see), then per CSP some indices are forced to Enforce and others to WarnOnly.
 */
import type { CloudProvider } from '../variant.js';
import { PCR_INDEX_CLUSTER_ID, type Measurement, measurementsError } from './measurement.js';
import { Measurements } from './measurements.js';

interface Override {
  readonly mustEnforce?: readonly number[];
  readonly mustWarn?: readonly number[];
  readonly values?: ReadonlyArray<readonly [number, string]>;
}

/** PCR value after a single EV_SEPARATOR event (PCRs the image never extends otherwise). */
const AFTER_SEPARATOR = '3d458cfe55cc03ea1f443f1562beec8df51c75e14a9fcf9a7234a13f198e7969';
const ZERO = '00'.repeat(32);
const ENFORCED = [4, 8, 9, 11, 12, 13, PCR_INDEX_CLUSTER_ID] as const;

const BY_CSP: Partial<Record<CloudProvider, Override>> = {
  AWS: {
    mustEnforce: ENFORCED,
    mustWarn: [0, 2, 3, 6, 14],
    values: [
      [2, AFTER_SEPARATOR],
      [3, AFTER_SEPARATOR],
      [6, AFTER_SEPARATOR],
      [14, ZERO],
    ],
  },
  Azure: {
    mustEnforce: ENFORCED,
    mustWarn: [1, 2, 3, 14],
    values: [
      [1, AFTER_SEPARATOR],
      [2, AFTER_SEPARATOR],
      [3, AFTER_SEPARATOR],
      [14, ZERO],
    ],
  },
  GCP: {
    mustEnforce: ENFORCED,
    mustWarn: [1, 2, 3, 6, 14],
    values: [
      [1, '3695dcc55e3aa34027c27793c85c723c697d708c42d1f73bd6fa4f26608a5b24'],
      [2, AFTER_SEPARATOR],
      [3, AFTER_SEPARATOR],
      [6, AFTER_SEPARATOR],
      [14, ZERO],
    ],
  },
  OpenStack: { mustEnforce: ENFORCED, mustWarn: [14], values: [[14, ZERO]] },
};

/**
 * Returns a copy of `input` with the variant's fixed values (its descriptor's
 * `imageMeasurementOverrides`), then the CSP's overrides applied: value overrides first (a new
 * index starts as Enforce), then the must-enforce and must-warn sets. An index named by those
 * sets but absent fails with `missing measurement for PCR <i>`.
 */
export function applyOverrides(input: ReadonlyMap<number, Measurement>, csp: CloudProvider, variant: string, variantValues: ReadonlyArray<readonly [number, string]> = []): Measurements {
  const out = new Measurements().copyFrom(input);
  const overrides = [{ values: variantValues }, BY_CSP[csp]].filter((o): o is Override => o !== undefined);
  for (const o of overrides) {
    for (const [index, value] of o.values ?? []) {
      out.set(index, { expected: Buffer.from(value, 'hex'), validationOpt: out.get(index)?.validationOpt ?? 'Enforce' });
    }
    for (const [indices, opt] of [
      [o.mustEnforce ?? [], 'Enforce'],
      [o.mustWarn ?? [], 'WarnOnly'],
    ] as const) {
      for (const index of indices) {
        const m = out.get(index);
        if (!m) throw measurementsError(`missing measurement for PCR ${index}`, { index, reason: 'missing', csp, variant });
        out.set(index, { expected: m.expected, validationOpt: opt });
      }
    }
  }
  return out;
}
