/**
 * The HCL attestation-key binding of Azure confidential VMs (docs/protocol/azure-hcl-report.md):
 * the hardware report's REPORT_DATA starts with SHA-256 of the runtime data, and the runtime
 * data's first key (`HCLAkPub`) is the TPM AK. Checking both makes the hardware report vouch for
 * the AK that signed the TPM quote.
 */
import { createHash } from 'node:crypto';
import { TPM_ALG, type TpmtPublic } from '@asterism/tpm';
import { AttestationError } from '../errors.js';

/** Checks that `reportData` binds `runtimeData` and that its first key is `ak`. */
export function checkHclAkBinding(runtimeData: Buffer, reportData: Buffer, ak: TpmtPublic): void {
  const digest = createHash('sha256').update(runtimeData).digest();
  if (reportData.length < 32 || !digest.equals(reportData.subarray(0, 32))) {
    throw new AttestationError('AK_UNTRUSTED', 'HCL runtime data is not bound by the hardware report: SHA-256(runtime data) != REPORT_DATA[0:32]', {
      details: { check: 'runtime-data-binding', expected: reportData.subarray(0, 32).toString('hex'), actual: digest.toString('hex') },
    });
  }
  const key = firstRuntimeKey(runtimeData);
  if (ak.type !== TPM_ALG.RSA) throw new AttestationError('AK_MISMATCH', 'the TPM AK is not an RSA key like the HCL AK', { details: { check: 'ak-type' } });
  if (!key.n.equals(ak.modulus)) {
    throw new AttestationError('AK_MISMATCH', 'the TPM AK modulus is not the HCL AK (runtime data keys[0].n)', { details: { check: 'ak-modulus' } });
  }
  // The runtime data exponent is read as a little-endian 32-bit number (zero-padded), as the
  // platform writes it; the TPM's exponent 0 means 65537.
  const e = Buffer.concat([key.e, Buffer.alloc(4)]).subarray(0, 4).readUInt32LE(0);
  const tpmE = ak.rsa.exponent === 0 ? 65537 : ak.rsa.exponent;
  if (key.e.length > 4 || e !== tpmE) {
    throw new AttestationError('AK_MISMATCH', `the TPM AK exponent ${tpmE} is not the HCL AK exponent ${e}`, { details: { check: 'ak-exponent', expected: e, actual: tpmE } });
  }
}

/** `keys[0]` of the runtime data JSON, with `n` and `e` decoded from base64url. */
function firstRuntimeKey(runtimeData: Buffer): { n: Buffer; e: Buffer } {
  const bad = (why: string): never => {
    throw new AttestationError('REPORT_INVALID', `HCL runtime data: ${why}`, { details: { field: 'runtime data' } });
  };
  let json: unknown;
  try {
    json = JSON.parse(runtimeData.toString('utf8'));
  } catch {
    bad('not JSON');
  }
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) bad('no "keys"');
  const k = (keys as unknown[])[0] as { n?: unknown; e?: unknown } | null;
  const b64url = /^[A-Za-z0-9_-]+$/;
  if (typeof k?.n !== 'string' || typeof k.e !== 'string' || !b64url.test(k.n) || !b64url.test(k.e)) bad('keys[0] has no base64url "n" and "e"');
  return { n: Buffer.from(k!.n as string, 'base64url'), e: Buffer.from(k!.e as string, 'base64url') };
}
