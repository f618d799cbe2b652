/**
 * The flags that name a node's attestation platform (platform.ts), shared by the bootstrapper
 * (apps/bootstrapper/src/flags.ts) and the verification service (apps/verification-service/src/flags.ts),
 * so both read `--attestation-variant` and `--tpm` alike.
 */
import { Variant } from '@asterism/attestation';
import { FlagError } from '@asterism/service-runtime';

/** `--attestation-variant` / CONSTEL_ATTESTATION_VARIANT (required). */
export function attestationVariant(raw: string | undefined): Variant {
  if (!raw) throw new FlagError('the attestation variant is required (--attestation-variant or CONSTEL_ATTESTATION_VARIANT)');
  try {
    return Variant.fromString(raw);
  } catch (err) {
    throw new FlagError(`attestation variant: ${(err as Error).message}`);
  }
}

/** `--tpm`: a device path, `unix:<path>` or `tcp:<host>:<port>` (default /dev/tpmrm0). */
export function tpmFlag(raw: string | undefined): string {
  const tpm = raw ?? '/dev/tpmrm0';
  if (!/^(\/.+|unix:.+|tcp:[^:]+:\d+)$/.test(tpm)) throw new FlagError(`invalid --tpm "${tpm}": want a device path, unix:<path> or tcp:<host>:<port>`);
  return tpm;
}
