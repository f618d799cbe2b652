import { TPM_GENERATED_VALUE, TPM_ST } from '../constants.js';
import { TpmParseError } from '../errors.js';
import { Reader } from '../marshal.js';
import { readPcrSelection, type PcrSelection } from './pcr-selection.js';

/** TPMS_CLOCK_INFO. resetCount/restartCount are obfuscated for keys outside the endorsement/platform hierarchies. */
export interface ClockInfo {
  readonly clock: bigint;
  readonly resetCount: number;
  readonly restartCount: number;
  readonly safe: boolean;
}

/** A parsed TPMS_ATTEST of type TPM_ST_ATTEST_QUOTE. */
export interface QuoteAttest {
  readonly magic: number;
  readonly type: number;
  readonly qualifiedSigner: Buffer;
  readonly extraData: Buffer;
  readonly clockInfo: ClockInfo;
  readonly firmwareVersion: bigint;
  readonly pcrSelect: PcrSelection[];
  readonly pcrDigest: Buffer;
}

/**
 * Parses TPMS_ATTEST bytes of a quote. Structural checks only (magic, type, exact length); the
 * signature and the nonce/PCR binding are checked by verifyQuote.
 */
export function decodeQuoteAttest(bytes: Uint8Array): QuoteAttest {
  const r = new Reader(bytes, 'TPMS_ATTEST');
  const magic = r.u32('magic');
  if (magic !== TPM_GENERATED_VALUE) {
    throw new TpmParseError('TPMS_ATTEST', `magic is 0x${magic.toString(16)}, not TPM_GENERATED_VALUE`, { magic });
  }
  const type = r.u16('type');
  if (type !== TPM_ST.ATTEST_QUOTE) {
    throw new TpmParseError('TPMS_ATTEST', `type is 0x${type.toString(16)}, not TPM_ST_ATTEST_QUOTE`, { type });
  }
  const qualifiedSigner = r.tpm2b('qualifiedSigner', 2 + 64);
  const extraData = r.tpm2b('extraData', 64);
  const clockInfo: ClockInfo = { clock: r.u64('clockInfo.clock'), resetCount: r.u32('clockInfo.resetCount'), restartCount: r.u32('clockInfo.restartCount'), safe: r.u8('clockInfo.safe') !== 0 };
  const firmwareVersion = r.u64('firmwareVersion');
  const pcrSelect = readPcrSelection(r);
  const pcrDigest = r.tpm2b('pcrDigest', 64);
  r.end();
  return { magic, type, qualifiedSigner, extraData, clockInfo, firmwareVersion, pcrSelect, pcrDigest };
}
