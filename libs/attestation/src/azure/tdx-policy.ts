/**
 * The azure-tdx attestation config checks on a verified quote (docs/protocol/attestation-config.md keys; stages in
 * docs/protocol/tdx-dcap.md): minimum QE SVN, PCE SVN and TEE TCB SVN (component-wise), and the
 * exact QE vendor ID, MRSEAM (only when configured) and XFAM. `"latest"` placeholders that were
 * never resolved (empty / zero) check nothing.
 */
import type { AzureTdxConfig } from '../config/types.js';
import { AttestationError } from '../errors.js';
import type { TdxQuote } from '../tdx/quote.js';

/** Throws TCB_TOO_LOW / POLICY_VIOLATION naming the field, expected and actual values. */
export function checkAzureTdxPolicy(quote: TdxQuote, config: AzureTdxConfig): void {
  const { header, body } = quote;
  minimum('qeSVN', config.qeSVN.value, header.qeSvn);
  minimum('pceSVN', config.pceSVN.value, header.pceSvn);
  const minTee = config.teeTCBSVN.value;
  minTee.forEach((min, i) => minimum(`teeTCBSVN[${i}]`, min, body.teeTcbSvn[i] ?? 0));
  exact('qeVendorID', config.qeVendorID.value, header.qeVendorId);
  exact('mrSeam', config.mrSeam, body.mrSeam);
  exact('xfam', config.xfam.value, body.xfam);
}

function minimum(field: string, min: number, actual: number): void {
  if (actual < min) {
    throw new AttestationError('TCB_TOO_LOW', `TDX quote ${field} ${actual} is below the configured minimum ${min}`, { details: { field, minimum: min, actual } });
  }
}

function exact(field: string, expected: Buffer, actual: Buffer): void {
  if (expected.length > 0 && !expected.equals(actual)) {
    throw new AttestationError('POLICY_VIOLATION', `TDX quote ${field} ${actual.toString('hex')} is not the configured ${expected.toString('hex')}`, {
      details: { field, expected: expected.toString('hex'), actual: actual.toString('hex') },
    });
  }
}
