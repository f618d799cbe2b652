/**
 * Default expected measurements and the measurement generator's overrides by (CSP, variant)
 * (docs/protocol/measurements.md `DefaultsFor`, `ApplyOverrides`), from each variant's descriptor.
 */
import type { Measurement } from './measurements/measurement.js';
import { Measurements } from './measurements/measurements.js';
import { applyOverrides } from './measurements/overrides.js';
import type { CloudProvider } from './variant.js';
import { variantDescriptors } from './variants/table.js';

/**
 * A fresh copy of the default measurements for `provider` + `variant`: the variant's own for its
 * CSP and the providers offering it; an empty map for other pairs (and the dummy variant), like
 * the reference's nil `M`.
 */
export function defaultsFor(provider: CloudProvider, variant: string): Measurements {
  const d = variantDescriptors().find((x) => x.variant.name === variant);
  if (!d || (d.csp !== provider && d.offeredBy[provider] === undefined)) return new Measurements();
  return d.defaultMeasurements();
}

/** {@link applyOverrides} with the variant's fixed values from its descriptor (none for an unknown variant). */
export function applyImageOverrides(input: ReadonlyMap<number, Measurement>, csp: CloudProvider, variant: string): Measurements {
  const d = variantDescriptors().find((x) => x.variant.name === variant);
  return applyOverrides(input, csp, variant, d?.imageMeasurementOverrides ?? []);
}
