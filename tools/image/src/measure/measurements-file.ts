/**
 * The files a prediction is published as (docs/protocol/measurements.md): the qemu-vtpm
 * attestation config the CLI and the joinservice read, and the image-measurements file
 * (`measurements.json`, the reference's per-image format) with one QEMU / qemu-vtpm entry.
 */
import { encodeAttestationConfig, encodeImageMeasurementsV2, Measurements } from '@asterism/attestation';
import type { PredictedPcr } from './predict.js';

/** The variant the node image is built for. */
export const IMAGE_VARIANT = 'qemu-vtpm';

/** Expected measurements of the predicted PCRs (warn-only where the value depends on more than the image). */
export function measurementsOf(pcrs: readonly PredictedPcr[]): Measurements {
  return Measurements.of(pcrs.map((p) => [p.index, { expected: Buffer.from(p.value), validationOpt: p.enforced ? 'Enforce' : 'WarnOnly' }] as const));
}

/** The attestation config JSON (`{"measurements": {...}}`) for `asterism verify --attestation-config`. */
export function attestationConfigJson(pcrs: readonly PredictedPcr[]): string {
  return encodeAttestationConfig({ variant: IMAGE_VARIANT, measurements: measurementsOf(pcrs) });
}

/** The image-measurements file of one image version. */
export function imageMeasurementsJson(pcrs: readonly PredictedPcr[], version: string, ref = '-', stream = 'nightly'): string {
  return encodeImageMeasurementsV2({ version, ref, stream, list: [{ csp: 'QEMU', attestationVariant: IMAGE_VARIANT, measurements: measurementsOf(pcrs) }] });
}
