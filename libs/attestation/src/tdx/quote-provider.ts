/**
 * What a TDX quote comes from and is checked with, shared by the TDX variants (qemu-tdx, azure-tdx):
 * the quote provider port and its configfs-tsm implementation, the verifier port, and which
 * platform's collateral a quote needs (docs/protocol/tdx-dcap.md).
 */
import { AttestationError } from '../errors.js';
import { ConfigfsTsm, CONFIGFS_TSM_REPORT_DIR, NODE_TSM_FS, type ConfigfsTsmOptions, type TsmFileSystem } from '../tsm/configfs-tsm.js';
import type { DcapCollateral } from './collateral.js';
import { parsePemChain, readPckTcb } from './pck.js';
import type { TdxPlatform } from './pcs-collateral.js';
import { cn } from './pki.js';
import type { TdxQuote } from './quote.js';
import type { DcapVerification } from './verifier.js';

/** Produces a TDX quote over 64 bytes of report data (configfs-tsm in a TD). */
export interface TdxQuoteProvider {
  getQuote(reportData: Buffer, signal?: AbortSignal): Promise<Buffer>;
}

/** Verifies a quote with collateral at a time (DcapVerifier, or a stand-in in unit tests). */
export interface TdxQuoteVerifier {
  verify(quote: TdxQuote, collateral: DcapCollateral, at: Date): DcapVerification;
}

/**
 * Quotes through configfs-tsm (the `tdx_guest` provider of ../tsm/configfs-tsm.ts): report data
 * padded to 64 bytes in, the quote from outblob.
 */
export class ConfigfsTsmQuoteProvider implements TdxQuoteProvider {
  readonly #tsm: ConfigfsTsm;

  constructor(root: string = CONFIGFS_TSM_REPORT_DIR, fs: TsmFileSystem = NODE_TSM_FS, options: Pick<ConfigfsTsmOptions, 'devicePath'> = {}) {
    this.#tsm = new ConfigfsTsm('tdx_guest', { root, fs, ...options });
  }

  async getQuote(reportData: Buffer, signal?: AbortSignal): Promise<Buffer> {
    if (reportData.length > 64) throw new AttestationError('ISSUER_FAILED', `report data is ${reportData.length} bytes, at most 64`, { details: { step: 'configfs-tsm report', provider: 'tdx_guest', tsm: 'request-invalid' } });
    return (await this.#tsm.report(Buffer.concat([reportData, Buffer.alloc(64 - reportData.length)]), undefined, signal)).outblob;
  }
}

/** FMSPC and issuing CA of a quote's PCK certificate: which collateral to fetch. */
export function platformOf(quote: TdxQuote): TdxPlatform {
  const [pck, issuer] = parsePemChain(quote.pckChainPem, 'PCK certificate chain');
  const name = issuer ? cn(issuer) : '';
  const ca = /processor/i.test(name) ? 'processor' : /platform/i.test(name) ? 'platform' : undefined;
  if (!ca) throw new AttestationError('CERT_CHAIN_INVALID', `PCK issuer "${name}" is neither the Platform nor the Processor CA`, { details: { issuer: name } });
  return { fmspc: readPckTcb(pck!).fmspc.toString('hex'), ca };
}
