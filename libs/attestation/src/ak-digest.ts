import { createHash } from 'node:crypto';
import { AttestationError } from './errors.js';
import type { VariantId } from './variant.js';
import { variantDescriptor } from './variants/table.js';
import { decodeDocument } from './vtpm/document.js';

/**
 * The attestation-key digest of an accepted (or freshly issued) document: `sha256:<hex>` of the
 * document's `ak_pub` (docs/adr/0008-attestation-bound-node-identity.md). Every vTPM variant's
 * document carries `ak_pub` and is signed with that key, so the digest names the (virtual) TPM the
 * node booted with; the joinservice computes it from a peer's document, the bootstrapper from one
 * it issues itself at init, and both compare it with a disk's binding. `dummy` and `qemu-tdx`
 * documents have no AK: every such node gets `none:<variant>` (their disk binding cannot tell
 * nodes apart; the name check still applies). A document that cannot be read is
 * `DOCUMENT_MALFORMED`, one without an AK `AK_MISSING`.
 */
export function attestationKeyDigest(variant: VariantId, document: Uint8Array): string {
  // Documents of insecure variants and of TDX variants without a vTPM carry no attestation key.
  const d = variantDescriptor(variant);
  if (d.insecure || d.platform === 'tdx') return `none:${variant.name}`;
  let akPub: Buffer | undefined;
  try {
    akPub = decodeDocument(document).attestation?.akPub;
  } catch (err) {
    throw new AttestationError('DOCUMENT_MALFORMED', `reading the attestation key of the ${variant.name} document: ${(err as Error).message}`, { cause: err, details: { variant: variant.name } });
  }
  if (!akPub || akPub.length === 0) throw new AttestationError('AK_MISSING', `the ${variant.name} document carries no attestation key`, { details: { variant: variant.name } });
  return `sha256:${createHash('sha256').update(akPub).digest('hex')}`;
}
