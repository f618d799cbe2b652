/**
 * The templates of the default expected measurements (docs/protocol/measurements.md `DefaultsFor`);
 * each variant's descriptor names its template and `defaultsFor` (../measurement-defaults.ts)
 * picks it by (CSP, variant). Asterism ships the reference's OSS values: placeholders where an
 * image-specific value belongs, zeros where the value is known (notably PCR 15 / the TDX
 * cluster-ID register, which must still be zero on a node that has not been initialized).
 */
import {
  PCR_INDEX_CLUSTER_ID,
  PCR_MEASUREMENT_LENGTH,
  placeHolderMeasurement,
  TDX_INDEX_CLUSTER_ID,
  TDX_MEASUREMENT_LENGTH,
  withAllBytes,
  type Measurement,
} from './measurement.js';
import { Measurements } from './measurements.js';

/** The vTPM template: PCRs 4, 9, 12 image-specific; 8, 11, 13 and 15 zero; all enforced. */
export function vtpmDefaults(): Measurements {
  const ph = () => placeHolderMeasurement(PCR_MEASUREMENT_LENGTH);
  const zero = () => withAllBytes(0x00, 'Enforce', PCR_MEASUREMENT_LENGTH);
  return Measurements.of([
    [4, ph()],
    [8, zero()],
    [9, ph()],
    [11, zero()],
    [12, ph()],
    [13, zero()],
    [PCR_INDEX_CLUSTER_ID, zero()],
  ]);
}

/** QEMU TDX: MRTD and RTMR0/1/3 image-specific, RTMR2 (cluster ID) zero; 48-byte values. */
export function qemuTdxDefaults(): Measurements {
  const ph = () => placeHolderMeasurement(TDX_MEASUREMENT_LENGTH);
  return Measurements.of([
    [0, ph()],
    [1, ph()],
    [2, ph()],
    [TDX_INDEX_CLUSTER_ID, withAllBytes(0x00, 'Enforce', TDX_MEASUREMENT_LENGTH)],
    [4, ph()],
  ]);
}

const hex = (s: string): Measurement => ({ expected: Buffer.from(s, 'hex'), validationOpt: 'Enforce' });

/**
 * A documented preset: the real values the reference's enterprise build ships for `qemu-vtpm`
 * (docs/protocol/measurements.md). Useful for tests against images built the reference's way; production
 * deployments should use the measurements published for their own image.
 */
export function enterpriseQemuVtpmMeasurements(): Measurements {
  const zero = () => withAllBytes(0x00, 'Enforce', PCR_MEASUREMENT_LENGTH);
  return Measurements.of([
    [4, hex('5198fd549fc9f44a49168b788f58e366af624866647dbe7e917388a0b1673c1d')],
    [8, zero()],
    [9, hex('2dee5d9c597a9098821e73214b9347b8e5e448c09ebd3375143855be72e33058')],
    [11, hex('db794e9bc200e22550514674ca3494119b00b2db74ffe2f7c970bf6bf5bc1cae')],
    [12, zero()],
    [13, zero()],
    [PCR_INDEX_CLUSTER_ID, zero()],
  ]);
}
