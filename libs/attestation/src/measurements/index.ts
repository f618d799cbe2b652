/** Expected measurements: the `M` map, its JSON/YAML codecs, comparison, defaults and image files. */
export {
  decodeHex,
  measurementFromHex,
  measurementFromJsonValue,
  measurementToJson,
  PCR_INDEX_CLUSTER_ID,
  PCR_INDEX_OWNER_ID,
  PCR_MEASUREMENT_LENGTH,
  placeHolderMeasurement,
  RTMR_INDEX_CLUSTER_ID,
  TDX_INDEX_CLUSTER_ID,
  TDX_MEASUREMENT_LENGTH,
  withAllBytes,
  type Measurement,
  type ValidationOption,
} from './measurement.js';
export { Measurements } from './measurements.js';
export { decodeMeasurementsJson, decodeMeasurementsYaml, encodeMeasurementsJson, encodeMeasurementsYaml, measurementsFromJsonValue, measurementsFromYamlNode } from './codec.js';
export { compareMeasurements, enforceMeasurements, measurementMismatchError, type CompareResult, type MeasurementMismatch, type MismatchErrorOptions } from './compare.js';
export { defaultsFor, enterpriseQemuVtpmMeasurements } from './defaults.js';
export { applyOverrides } from './overrides.js';
export {
  decodeImageMeasurementsV2,
  encodeImageMeasurementsV2,
  mergeImageMeasurementsV2,
  selectImageMeasurements,
  type ImageMeasurementsV2,
  type ImageMeasurementsV2Entry,
} from './image-measurements.js';
export { goJsonString } from './go-json-string.js';
