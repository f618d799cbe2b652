/** Node image tooling: reading an image file and predicting the PCRs its boot chain produces. */
export { readImage, type ImageContents } from './disk/image-file.js';
export { parseGpt, uefiGptData, type Gpt, type GptPartition } from './disk/gpt.js';
export { ImageError, type ImageErrorCode } from './errors.js';
export { authenticodeSha256, parsePe, sectionData, type PeImage, type PeSection } from './measure/pe.js';
export { extend, replay, SEPARATOR_DIGEST, sha256 } from './measure/pcr.js';
export { predictPcrs, type PredictedPcr, type Prediction } from './measure/predict.js';
export { attestationConfigJson, imageMeasurementsJson, measurementsOf } from './measure/measurements-file.js';
export { stubPcr11Digests, ukiParts, UKI_SECTIONS, type UkiParts } from './measure/uki.js';
export { predictCommand, type PredictOptions } from './predict-command.js';
