/**
 * Attestation keys created from a template are kept loaded per TPM client (one per kind and
 * hierarchy) instead of being created for every quote: TPM2_CreatePrimary of an RSA AK costs
 * 12-63 ms on swtpm, a quote a few ms. Shared by every issuer on that client, so the TPM's few
 * transient object slots (swtpm: 3) hold at most one AK per template however many issuers exist.
 * Callers serialise use per TPM (the issuer's queue), so no locking happens here.
 */
import type { Hierarchy, TpmClient, TpmtPublic } from '@asterism/tpm';

/** The attestation key an issue call quotes with. */
export interface LoadedAttestationKey {
  readonly handle: number;
  /** TPMT_PUBLIC bytes (the document's `ak_pub`). */
  readonly publicBytes: Buffer;
  readonly public: TpmtPublic;
  /** DER certificate of the AK, if the platform has one (the document's `ak_cert`). */
  readonly cert?: Buffer;
  /** Whether the handle is transient and must be flushed after use (persistent keys stay). */
  readonly transient: boolean;
}

const cached = new WeakMap<TpmClient, Map<string, LoadedAttestationKey & { name: Buffer }>>();

/**
 * The cached AK of this template if it is still loaded under its handle (TPM2_ReadPublic returns
 * the same name; a TPM reset or someone flushing transient objects invalidates it), otherwise a
 * new one, cached.
 */
export async function cachedTemplateAk(tpm: TpmClient, kind: 'rsa' | 'ecc', hierarchy: Hierarchy): Promise<LoadedAttestationKey> {
  const key = `${kind}:${hierarchy}`;
  let perTpm = cached.get(tpm);
  if (!perTpm) cached.set(tpm, (perTpm = new Map()));
  const hit = perTpm.get(key);
  if (hit) {
    const still = await tpm.readPublic(hit.handle).catch(() => undefined);
    if (still?.name.equals(hit.name)) return hit;
    perTpm.delete(key);
  }
  const created = await tpm.createAttestationKey(kind, hierarchy);
  const ak = { handle: created.handle, publicBytes: created.publicBytes, public: created.public, name: created.name, transient: true };
  perTpm.set(key, ak);
  return ak;
}

/** Whether `ak` is the cached AK of this TPM (kept loaded after a successful issue). */
export function isCachedAk(tpm: TpmClient, ak: LoadedAttestationKey): boolean {
  for (const k of cached.get(tpm)?.values() ?? []) if (k === ak) return true;
  return false;
}

/** Drops `ak` from the cache and flushes it (after a failure: the next issue starts clean). */
export async function evictAk(tpm: TpmClient, ak: LoadedAttestationKey): Promise<void> {
  const perTpm = cached.get(tpm);
  for (const [k, v] of perTpm ?? []) if (v === ak) perTpm!.delete(k);
  await tpm.flushContext(ak.handle).catch(() => undefined);
}

/** Flushes every cached AK of this TPM (shutdown, or before handing the TPM to someone else). */
export async function releaseCachedAks(tpm: TpmClient): Promise<number> {
  const perTpm = cached.get(tpm);
  if (!perTpm) return 0;
  const aks = [...perTpm.values()];
  perTpm.clear();
  for (const ak of aks) await tpm.flushContext(ak.handle).catch(() => undefined);
  return aks.length;
}
