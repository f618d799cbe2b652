/** Test and benchmark helpers of @asterism/attestation: the real TDX golden vectors, error-code probes, a configfs-tsm-like directory and a stand-in Intel PKI. */
export { tdxVector, VECTOR_OFFSETS, VECTOR_TIME, vectorCollateral, td15Collateral, TD15_VECTOR_TIME, TD15_OFFSETS, V4_SPR, V5_TD15, type TdxVectorSet } from './tdx/vectors.fixture.js';
export { errorCode } from './tdx/vectors.fixture.js';
export { FakeConfigfsTsm, replayFirmware, type TsmFirmware } from './tsm/configfs-tsm.fixture.js';
/** A stand-in Intel PKI (openssl) for TDX tests that need a quote over chosen report data accepted end to end. */
export { makeSyntheticPki, resignedCollateral, resignedQuote, type SyntheticPki } from './tdx/synthetic-pki.fixture.js';
/** GCE platform events (PCR 0 and the event log) for gcp-sev-es tests on a TPM. */
export { gceEventLog, measureGceEvents } from './gcp/platform-events.fixture.js';
/** A test-only second dummy variant (its own OID) that tests register to show the apps pick a new variant up from the table. */
export { secondDummyVariant } from './variants/second-dummy.fixture.js';
