/** Test helpers of @asterism/tpm: a real swtpm per test. */
export { startSwtpm, Swtpm, SWTPM_INSTALL_HINT, type SwtpmOptions, swtpmAvailable, tpm2ToolsAvailable } from './testing/swtpm.fixture.js';
