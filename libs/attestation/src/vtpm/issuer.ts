/**
 * The generic vTPM issuer (docs/protocol/vtpm-attestation.md, issuing): an attestation key from a go-tpm-tools
 * template (created once per TPM and kept loaded, ak-cache.ts), one quote per allocated PCR bank over PCRs 0-23 qualified by
 * tpmNonce = SHA256(instanceInfo || SHA256(userData || nonce)), the optional event log and the
 * variant's instance info, written as the Go-JSON document.
 */
import { createHash } from 'node:crypto';
import { HASH_INFO, range, TpmError, type Hierarchy, type TpmClient } from '@asterism/tpm';
import { AttestationError } from '../errors.js';
import { makeExtraData, makeTpmNonce } from '../extra-data.js';
import type { Issuer } from '../interfaces.js';
import type { VariantId as Variant } from '../variant.js';
import { cachedTemplateAk, evictAk, isCachedAk, releaseCachedAks, type LoadedAttestationKey } from './ak-cache.js';
import { encodeDocument, type TpmQuote } from './document.js';

/** Opens (or hands out) the TPM for one issue call. */
export type TpmOpener = () => Promise<TpmClient>;

export type { LoadedAttestationKey } from './ak-cache.js';

/** Variant-specific parts of a vTPM issuer. */
export interface VtpmIssuerOptions {
  readonly variant: Variant;
  readonly openTpm: TpmOpener;
  /** Attestation key template (go-tpm-tools AKTemplateRSA / AKTemplateECC). */
  readonly akKind: 'rsa' | 'ecc';
  readonly akHierarchy?: Hierarchy;
  /** Loads the AK another way than from the template (a persistent or NV-defined key). */
  readonly loadAttestationKey?: (tpm: TpmClient) => Promise<LoadedAttestationKey>;
  /** Variant instance info; `null` is Go's nil (qemu-vtpm). May embed extraData or bind the AK. */
  readonly instanceInfo?: (tpm: TpmClient, extraData: Buffer, signal: AbortSignal | undefined, ak: LoadedAttestationKey) => Promise<Buffer | null>;
  /** The raw TCG event log, if the platform has one (e.g. /sys/kernel/security/tpm0/binary_bios_measurements). */
  readonly eventLog?: () => Promise<Buffer>;
}

const fail = (step: string, err: unknown) =>
  err instanceof AttestationError ? err : new AttestationError('ISSUER_FAILED', `${step}: ${(err as Error).message}`, { cause: err, details: { step } });

/** Pending issuance per TPM client. */
const tpmQueues = new WeakMap<TpmClient, Promise<unknown>>();

/** Issues vTPM attestation documents for one variant. */
export class VtpmIssuer implements Issuer {
  readonly variant: Variant;

  constructor(private readonly options: VtpmIssuerOptions) {
    this.variant = options.variant;
  }

  async issue(userData: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    signal?.throwIfAborted();
    let tpm: TpmClient;
    try {
      tpm = await this.options.openTpm();
    } catch (err) {
      throw fail('opening TPM', err);
    }
    return this.#queued(tpm, () => this.issueWith(tpm, userData, nonce, signal));
  }

  /**
   * Flushes the attestation keys kept loaded on this issuer's TPM (shared with other issuers of
   * the same TPM client; the next issue creates them again). Returns how many were flushed.
   */
  async releaseAttestationKeys(): Promise<number> {
    const tpm = await this.options.openTpm();
    return this.#queued(tpm, () => releaseCachedAks(tpm));
  }

  // Issuance is serialised per TPM (across issuers): AKs share a TPM with only a few object
  // slots (swtpm: 3), and a cached AK must not be flushed while another issue quotes with it.
  #queued<T>(tpm: TpmClient, fn: () => Promise<T>): Promise<T> {
    const previous = tpmQueues.get(tpm) ?? Promise.resolve();
    const run = previous.then(fn);
    tpmQueues.set(tpm, run.catch(() => undefined));
    return run;
  }

  private async issueWith(tpm: TpmClient, userData: Uint8Array, nonce: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    signal?.throwIfAborted();
    let ak: LoadedAttestationKey;
    try {
      // A template AK is created once per TPM and kept (ak-cache.ts); loaded keys are the variant's business.
      ak = this.options.loadAttestationKey ? await this.options.loadAttestationKey(tpm) : await cachedTemplateAk(tpm, this.options.akKind, this.options.akHierarchy ?? 'owner');
    } catch (err) {
      throw fail('loading attestation key', err);
    }
    let ok = false;
    try {
      const extraData = makeExtraData(userData, nonce);
      let instanceInfo: Buffer | null;
      try {
        instanceInfo = this.options.instanceInfo ? await this.options.instanceInfo(tpm, extraData, signal, ak) : null;
      } catch (err) {
        throw fail('fetching instance info', err);
      }
      signal?.throwIfAborted();
      const tpmNonce = makeTpmNonce(instanceInfo, extraData);
      let quotes: TpmQuote[];
      let eventLog: Buffer;
      try {
        quotes = [];
        for (const bank of await tpm.pcrBanks()) quotes.push(await quoteBank(tpm, ak.handle, tpmNonce, bank.hashAlg));
        eventLog = this.options.eventLog ? await this.options.eventLog() : Buffer.alloc(0);
      } catch (err) {
        throw fail('creating attestation', err);
      }
      const doc = encodeDocument({
        attestation: { akPub: ak.publicBytes, quotes, eventLog, instanceInfo: null, canonicalEventLog: Buffer.alloc(0), akCert: ak.cert ?? Buffer.alloc(0), intermediateCerts: [], teeAttestation: null },
        instanceInfo,
        userData: Buffer.from(userData),
      });
      ok = true;
      return doc;
    } finally {
      // A cached AK stays loaded after a successful issue; after any failure it is flushed and
      // dropped, like every other transient AK, so a broken issuance never leaks a TPM slot.
      if (isCachedAk(tpm, ak)) {
        if (!ok) await evictAk(tpm, ak);
      } else if (ak.transient) {
        await tpm.flushContext(ak.handle).catch(() => undefined);
      }
    }
  }
}

/**
 * Quotes PCRs 0-23 of one bank and reads their values. If a PCR changes between the quote and
 * the read (another task extending), the values would not match the quote: retry.
 */
async function quoteBank(tpm: TpmClient, akHandle: number, tpmNonce: Buffer, hashAlg: number): Promise<TpmQuote> {
  const pcrsSel = range(24);
  for (let attempt = 0; attempt < 5; attempt++) {
    const q = await tpm.quote(akHandle, tpmNonce, [{ hashAlg, pcrs: pcrsSel }]);
    const values = await tpm.pcrRead(pcrsSel, hashAlg);
    const sigHash = HASH_INFO.get(q.signature.hashAlg);
    if (!sigHash) throw new TpmError('TPM_UNSUPPORTED', `quote signed with unsupported hash 0x${q.signature.hashAlg.toString(16)}`);
    const digest = createHash(sigHash.name).update(Buffer.concat(pcrsSel.map((p) => values.get(p)!))).digest();
    if (digest.equals(q.attest.pcrDigest)) return { quote: q.attestBytes, rawSig: q.signatureBytes, pcrs: { hash: hashAlg, pcrs: values } };
  }
  throw new AttestationError('ISSUER_FAILED', 'creating attestation: PCRs kept changing while quoting', { details: { hashAlg } });
}
