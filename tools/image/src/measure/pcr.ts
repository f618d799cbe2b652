/** SHA-256 PCR arithmetic: a register starts at zero and every event extends it (TPM2_PCR_Extend). */
import { createHash } from 'node:crypto';

/** Length of a SHA-256 PCR. */
export const PCR_SIZE = 32;

/** SHA-256 of `data`. */
export function sha256(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(data).digest();
}

/** The register after extending `pcr` with `digest`: SHA-256(pcr || digest). */
export function extend(pcr: Buffer, digest: Buffer): Buffer {
  return sha256(Buffer.concat([pcr, digest]));
}

/** The value of a register that starts at zero and is extended with `digests` in order. */
export function replay(digests: readonly Buffer[]): Buffer {
  return digests.reduce((pcr, d) => extend(pcr, d), Buffer.alloc(PCR_SIZE));
}

/** The digest of the separator event the firmware writes into PCRs 0-7 before booting (a UINT32 zero). */
export const SEPARATOR_DIGEST = sha256(Buffer.alloc(4));
