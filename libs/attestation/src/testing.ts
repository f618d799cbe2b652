/** Test and benchmark helpers of @asterism/attestation: the real TDX golden vectors and error-code probes. */
export { tdxVector, VECTOR_OFFSETS, VECTOR_TIME, vectorCollateral } from './tdx/vectors.fixture.js';
export { errorCode } from './tdx/vectors.fixture.js';
