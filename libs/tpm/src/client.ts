import { createHash } from 'node:crypto';
import { algName, EK_CERT_NV_INDEX, HASH_INFO, PCR_COUNT, TPM_ALG, TPM_CAP, TPM_CC, TPM_HT, TPM_PT, TPM_RH, TPM_ST, TPM_SU, type TpmCommandName } from './constants.js';
import { TpmError, TpmResponseError } from './errors.js';
import { tpm2b, u16, u32, u8 } from './marshal.js';
import {
  parseCreatePrimaryResponse,
  parseEmptyResponse,
  parseGetCapabilityResponse,
  parseNvReadPublicResponse,
  parseNvReadResponse,
  parsePcrEventResponse,
  parsePcrReadResponse,
  parseQuoteResponse,
  parseReadPublicResponse,
  type CapabilityData,
  type CreatedPrimary,
  type NvPublic,
  type Quote,
  type ReadPublicResult,
} from './responses.js';
import { TPM_RC } from './response-codes.js';
import { encodeDigestValues, encodePcrSelection, type PcrSelection, type TaggedDigest } from './structures/pcr-selection.js';
import { encodePublic, type TpmtPublic } from './structures/public.js';
import { akTemplateEcc, akTemplateRsa } from './templates.js';
import type { TpmTransport } from './transport.js';

/** Hierarchies a primary key can be created in. */
export type Hierarchy = 'owner' | 'endorsement' | 'platform' | 'null';
const HIERARCHY_HANDLE: Record<Hierarchy, number> = { owner: TPM_RH.OWNER, endorsement: TPM_RH.ENDORSEMENT, platform: TPM_RH.PLATFORM, null: TPM_RH.NULL };

/** PCR values of one bank, by index. */
export type PcrValues = Map<number, Buffer>;

/** Warnings after which the same command may simply be sent again. */
const RETRYABLE = new Set<number>([TPM_RC.RETRY, TPM_RC.YIELDED, TPM_RC.TESTING]);

/** Password-session authorization area for `count` handles with empty passwords. */
function passwordAuth(count: number): Buffer {
  const one = Buffer.concat([u32(TPM_RH.PW), tpm2b(), u8(0), tpm2b()]);
  const area = Buffer.concat(Array.from({ length: count }, () => one));
  return Buffer.concat([u32(area.length), area]);
}

/** Marshals a command: header, handle area, optional password sessions, parameters. */
export function buildCommand(command: TpmCommandName, handles: readonly number[], params: Buffer, authorizedHandles = 0): Buffer {
  const body = Buffer.concat([...handles.map(u32), ...(authorizedHandles ? [passwordAuth(authorizedHandles)] : []), params]);
  return Buffer.concat([u16(authorizedHandles ? TPM_ST.SESSIONS : TPM_ST.NO_SESSIONS), u32(10 + body.length), u32(TPM_CC[command]), body]);
}

/**
 * A TPM 2.0 client over any transport (`/dev/tpmrm0` or a swtpm socket). It owns no global
 * state; transient handles it creates must be flushed by the caller (`flushContext`).
 */
export class TpmClient {
  #nvBufferMax: number | undefined;

  constructor(readonly transport: TpmTransport) {}

  /** Sends a command, resending it while the TPM answers RETRY/YIELDED/TESTING (at most 20 times). */
  async #send(command: TpmCommandName, handles: readonly number[], params: Buffer, authorized = 0): Promise<Buffer> {
    const cmd = buildCommand(command, handles, params, authorized);
    for (let attempt = 0; ; attempt++) {
      const resp = await this.transport.transmit(cmd);
      const rc = resp.length >= 10 ? resp.readUInt32BE(6) : 0;
      if (!RETRYABLE.has(rc) || attempt >= 20) return resp;
      await new Promise((r) => setTimeout(r, Math.min(2 ** attempt, 50)));
    }
  }

  /** TPM2_Startup; returns false when the TPM was already started (TPM_RC_INITIALIZE). */
  async startup(type: 'clear' | 'state' = 'clear'): Promise<boolean> {
    try {
      parseEmptyResponse(await this.#send('Startup', [], u16(type === 'clear' ? TPM_SU.CLEAR : TPM_SU.STATE)), 'Startup');
      return true;
    } catch (err) {
      if (err instanceof TpmResponseError && err.rc === TPM_RC.INITIALIZE) return false;
      throw err;
    }
  }

  /** TPM2_GetCapability (one call; check `moreData`). */
  async getCapability(capability: number, property: number, propertyCount: number): Promise<{ moreData: boolean; data: CapabilityData }> {
    return parseGetCapabilityResponse(await this.#send('GetCapability', [], Buffer.concat([u32(capability), u32(property), u32(propertyCount)])));
  }

  /** The allocated PCR banks and their PCRs. */
  async pcrBanks(): Promise<PcrSelection[]> {
    const { data } = await this.getCapability(TPM_CAP.PCRS, 0, 1);
    if (data.capability !== TPM_CAP.PCRS) throw new TpmError('TPM_PARSE', `GetCapability(PCRS) returned capability ${data.capability}`);
    return data.pcrs.filter((b) => b.pcrs.length > 0);
  }

  /** One TPM property value (TPM_PT), or undefined when the TPM does not report it. */
  async getProperty(property: number): Promise<number | undefined> {
    const { data } = await this.getCapability(TPM_CAP.TPM_PROPERTIES, property, 1);
    if (data.capability !== TPM_CAP.TPM_PROPERTIES) return undefined;
    return data.properties.find((p) => p.property === property)?.value;
  }

  /** All handles of a type (e.g. 0x81000000 persistent, 0x01000000 NV), following `moreData`. */
  async listHandles(first: number): Promise<number[]> {
    const out: number[] = [];
    let next = first >>> 0;
    const type = first >>> 24;
    for (let i = 0; i < 64; i++) {
      const { moreData, data } = await this.getCapability(TPM_CAP.HANDLES, next, 64);
      if (data.capability !== TPM_CAP.HANDLES) break;
      const mine = data.handles.filter((h) => h >>> 24 === type);
      out.push(...mine);
      if (!moreData || mine.length === 0) break;
      next = (mine[mine.length - 1]! + 1) >>> 0;
    }
    return out;
  }

  /**
   * TPM2_PCR_Read of any PCRs of one bank. The TPM returns at most 8 digests per call, so this
   * loops until every requested PCR is read; if another client extends meanwhile (the update
   * counter moves), it starts over so the values are one consistent snapshot.
   */
  async pcrRead(pcrs: readonly number[] = range(PCR_COUNT), hashAlg: number = TPM_ALG.SHA256): Promise<PcrValues> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const out: PcrValues = new Map();
      let counter: number | undefined;
      let consistent = true;
      let wanted = [...new Set(pcrs)].sort((a, b) => a - b);
      while (wanted.length > 0) {
        const res = parsePcrReadResponse(await this.#send('PCR_Read', [], encodePcrSelection([{ hashAlg, pcrs: wanted }])));
        if (counter !== undefined && res.updateCounter !== counter) consistent = false;
        counter = res.updateCounter;
        const got = res.selection.filter((s) => s.hashAlg === hashAlg).flatMap((s) => s.pcrs);
        const returned = res.selection.flatMap((s) => s.pcrs.map((p) => ({ bank: s.hashAlg, p })));
        returned.forEach((x, i) => {
          if (x.bank === hashAlg) out.set(x.p, res.digests[i]!);
        });
        const before = wanted.length;
        wanted = wanted.filter((p) => !got.includes(p));
        if (wanted.length === before) {
          throw new TpmError('TPM_UNSUPPORTED', `PCR bank ${algName(hashAlg)} returned no values for PCRs ${wanted.join(',')} (bank not allocated?)`, {
            details: { hashAlg, pcrs: wanted },
          });
        }
      }
      if (consistent) return out;
    }
    throw new TpmError('TPM_TRANSPORT', 'PCRs kept changing while reading them (5 attempts)');
  }

  /** TPM2_PCR_Extend with one digest per bank (each must match its bank's size). */
  async pcrExtend(pcr: number, digests: readonly TaggedDigest[]): Promise<void> {
    parseEmptyResponse(await this.#send('PCR_Extend', [pcr], encodeDigestValues(digests), 1), 'PCR_Extend');
  }

  /** TPM2_PCR_Event: the TPM hashes `data` (≤ 1024 bytes) with every active bank and extends each. */
  async pcrEvent(pcr: number, data: Uint8Array): Promise<TaggedDigest[]> {
    if (data.length > 1024) throw new RangeError(`PCR_Event data is ${data.length} bytes, the maximum is 1024`);
    return parsePcrEventResponse(await this.#send('PCR_Event', [pcr], tpm2b(data), 1));
  }

  /** TPM2_CreatePrimary with an empty auth value and no creation PCRs. */
  async createPrimary(hierarchy: Hierarchy, template: TpmtPublic): Promise<CreatedPrimary> {
    const sensitive = tpm2b(Buffer.concat([tpm2b(), tpm2b()]));
    const params = Buffer.concat([sensitive, tpm2b(encodePublic(template)), tpm2b(), u32(0)]);
    return parseCreatePrimaryResponse(await this.#send('CreatePrimary', [HIERARCHY_HANDLE[hierarchy]], params, 1));
  }

  /** Creates a go-tpm-tools-compatible attestation key (transient; flush it when done). */
  async createAttestationKey(kind: 'rsa' | 'ecc', hierarchy: Hierarchy = 'owner'): Promise<CreatedPrimary> {
    return this.createPrimary(hierarchy, kind === 'rsa' ? akTemplateRsa() : akTemplateEcc());
  }

  /** TPM2_ReadPublic of a loaded or persistent object. */
  async readPublic(handle: number): Promise<ReadPublicResult> {
    return parseReadPublicResponse(await this.#send('ReadPublic', [handle], Buffer.alloc(0)));
  }

  /**
   * TPM2_Quote over `selection`, qualified by `qualifyingData` (≤ 64 bytes), signed with the key's
   * own scheme (inScheme TPM_ALG_NULL; restricted keys must have one).
   */
  async quote(signHandle: number, qualifyingData: Uint8Array, selection: readonly PcrSelection[]): Promise<Quote> {
    const params = Buffer.concat([tpm2b(qualifyingData), u16(TPM_ALG.NULL), encodePcrSelection(selection)]);
    return parseQuoteResponse(await this.#send('Quote', [signHandle], params, 1));
  }

  /** TPM2_FlushContext of a transient object or session. */
  async flushContext(handle: number): Promise<void> {
    parseEmptyResponse(await this.#send('FlushContext', [], u32(handle)), 'FlushContext');
  }

  /**
   * Flushes every transient object loaded on the TPM and returns how many there were. Only for a
   * process that owns the TPM outright (swtpm has no resource manager: objects a crashed process
   * loaded stay until reset and fill the few object slots, TPM_RC_OBJECT_MEMORY); call it before
   * this process loads anything itself.
   */
  async flushTransientObjects(): Promise<number> {
    const handles = await this.listHandles(TPM_HT.TRANSIENT << 24);
    for (const h of handles) await this.flushContext(h);
    return handles.length;
  }

  /** TPM2_NV_ReadPublic. */
  async nvReadPublic(index: number): Promise<{ nvPublic: NvPublic; name: Buffer }> {
    return parseNvReadPublicResponse(await this.#send('NV_ReadPublic', [index], Buffer.alloc(0)));
  }

  /** Reads a whole NV index in TPM_PT_NV_BUFFER_MAX chunks, authorised by `auth` (owner by default). */
  async nvRead(index: number, auth: 'owner' | 'index' = 'owner'): Promise<Buffer> {
    const { nvPublic } = await this.nvReadPublic(index);
    this.#nvBufferMax ??= (await this.getProperty(TPM_PT.NV_BUFFER_MAX)) ?? 512;
    const authHandle = auth === 'owner' ? TPM_RH.OWNER : index;
    const chunks: Buffer[] = [];
    for (let off = 0; off < nvPublic.dataSize; ) {
      const size = Math.min(this.#nvBufferMax, nvPublic.dataSize - off);
      const data = parseNvReadResponse(await this.#send('NV_Read', [authHandle, index], Buffer.concat([u16(size), u16(off)]), 1));
      if (data.length !== size) throw new TpmError('TPM_PARSE', `NV_Read returned ${data.length} bytes, asked for ${size}`);
      chunks.push(data);
      off += size;
    }
    return Buffer.concat(chunks);
  }

  /**
   * The EK certificate (DER) from its well-known NV index, or undefined when the TPM has none.
   * Trailing zero padding some manufacturers add is kept; X.509 parsers ignore it.
   */
  async readEkCertificate(kind: keyof typeof EK_CERT_NV_INDEX = 'RSA_2048'): Promise<Buffer | undefined> {
    try {
      return await this.nvRead(EK_CERT_NV_INDEX[kind]);
    } catch (err) {
      if (err instanceof TpmResponseError && err.info.base === TPM_RC.HANDLE) return undefined;
      throw err;
    }
  }
}

/** 0..n-1. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** The software PCR extend: H(old || digest). */
export function softwareExtend(old: Uint8Array, digest: Uint8Array, hashAlg: number = TPM_ALG.SHA256): Buffer {
  const info = HASH_INFO.get(hashAlg);
  if (!info) throw new TpmError('TPM_UNSUPPORTED', `unsupported hash algorithm ${algName(hashAlg)}`);
  return createHash(info.name).update(old).update(digest).digest();
}
