/**
 * The attestation key Azure's confidential VMs keep persisted in their vTPM (the HCL attestation
 * key, docs/protocol/sev-snp.md §7-§8): azure-sev-snp, azure-tdx and azure-trustedlaunch quote
 * with it instead of creating one from a template.
 */
import type { TpmClient } from '@asterism/tpm';
import { AZURE_AK_HANDLE } from '../snp/hcl.js';
import type { LoadedAttestationKey } from '../vtpm/issuer.js';

/** Reads the persisted AK's public area; the key stays loaded (it is not flushed after a quote). */
export async function loadAzurePersistedAk(tpm: TpmClient): Promise<LoadedAttestationKey> {
  const pub = await tpm.readPublic(AZURE_AK_HANDLE);
  return { handle: AZURE_AK_HANDLE, publicBytes: pub.publicBytes, public: pub.public, transient: false };
}
