/** Test and benchmark helpers of @asterism/attestation: the real TDX golden vectors, error-code probes and a configfs-tsm-like directory. */
export { tdxVector, VECTOR_OFFSETS, VECTOR_TIME, vectorCollateral } from './tdx/vectors.fixture.js';
export { errorCode } from './tdx/vectors.fixture.js';
export { FakeConfigfsTsm, replayFirmware, type TsmFirmware } from './tsm/configfs-tsm.fixture.js';
export { makeSyntheticPki, resignedCollateral, resignedQuote, type SyntheticPki } from './tdx/synthetic-pki.fixture.js';
