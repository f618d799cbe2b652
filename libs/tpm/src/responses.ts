import { algName, HASH_INFO, TPM_CAP, TPM_ST, type TpmCommandName } from './constants.js';
import { TpmParseError, TpmResponseError } from './errors.js';
import { Reader } from './marshal.js';
import { decodeQuoteAttest, type QuoteAttest } from './structures/attest.js';
import { readDigestValues, readPcrSelection, type PcrSelection, type TaggedDigest } from './structures/pcr-selection.js';
import { decodePublic, publicName, type TpmtPublic } from './structures/public.js';
import { readSignature, type TpmtSignature } from './structures/signature.js';

/**
 * Pure response parsers: each takes the complete response bytes of one command and either returns
 * a typed result or throws TpmResponseError (the TPM said no) / TpmParseError (malformed bytes).
 */

/** The parameter area of a successful response. */
export interface ParsedResponse {
  readonly handles: number[];
  readonly params: Reader;
}

/** Checks the header and response code and splits handles, parameters and the session area. */
export function parseResponse(resp: Uint8Array, command: TpmCommandName, outHandles = 0): ParsedResponse {
  const r = new Reader(resp, `TPM2_${command} response`);
  const tag = r.u16('tag');
  const size = r.u32('responseSize');
  const rc = r.u32('responseCode');
  if (size !== resp.length) throw new TpmParseError(r.what, `responseSize ${size} does not match the ${resp.length} bytes received`);
  if (rc !== 0) throw new TpmResponseError(rc, command);
  if (tag !== TPM_ST.NO_SESSIONS && tag !== TPM_ST.SESSIONS) throw new TpmParseError(r.what, `unknown tag 0x${tag.toString(16)}`);
  const handles: number[] = [];
  for (let i = 0; i < outHandles; i++) handles.push(r.u32('handle'));
  if (tag === TPM_ST.SESSIONS) {
    const paramSize = r.u32('parameterSize');
    // The rest after the parameters is the session (auth) area; for password sessions we ignore it.
    return { handles, params: new Reader(r.bytes(paramSize, 'parameters'), r.what) };
  }
  return { handles, params: new Reader(r.bytes(r.remaining, 'parameters'), r.what) };
}

/** One PCR_Read round trip. */
export interface PcrReadResult {
  readonly updateCounter: number;
  readonly selection: PcrSelection[];
  readonly digests: Buffer[];
}

export function parsePcrReadResponse(resp: Uint8Array): PcrReadResult {
  const { params: r } = parseResponse(resp, 'PCR_Read');
  const updateCounter = r.u32('pcrUpdateCounter');
  const selection = readPcrSelection(r);
  const count = r.u32('TPML_DIGEST.count');
  const selected = selection.reduce((n, s) => n + s.pcrs.length, 0);
  if (count !== selected) throw new TpmParseError(r.what, `${count} digests for ${selected} selected PCRs`);
  if (count > 8) throw new TpmParseError(r.what, `TPML_DIGEST count ${count} exceeds 8`);
  const digests: Buffer[] = [];
  let i = 0;
  for (const s of selection) {
    const size = HASH_INFO.get(s.hashAlg)?.size;
    if (size === undefined) throw new TpmParseError(r.what, `unknown PCR bank ${algName(s.hashAlg)}`);
    for (let k = 0; k < s.pcrs.length; k++, i++) {
      const d = r.tpm2b('TPM2B_DIGEST', 64);
      if (d.length !== size) throw new TpmParseError(r.what, `PCR ${s.pcrs[k]} digest is ${d.length} bytes, bank ${algName(s.hashAlg)} needs ${size}`);
      digests.push(d);
    }
  }
  r.end();
  return { updateCounter, selection, digests };
}

/** A primary object created by CreatePrimary. */
export interface CreatedPrimary {
  readonly handle: number;
  readonly publicBytes: Buffer;
  readonly public: TpmtPublic;
  readonly name: Buffer;
}

export function parseCreatePrimaryResponse(resp: Uint8Array): CreatedPrimary {
  const { handles, params: r } = parseResponse(resp, 'CreatePrimary', 1);
  const publicBytes = r.tpm2b('outPublic');
  r.tpm2b('creationData');
  r.tpm2b('creationHash', 64);
  r.u16('creationTicket.tag');
  r.u32('creationTicket.hierarchy');
  r.tpm2b('creationTicket.digest', 64);
  const name = r.tpm2b('name', 2 + 64);
  r.end();
  const pub = decodePublic(publicBytes);
  if (!publicName(pub).equals(name)) throw new TpmParseError(r.what, 'the returned name does not match the returned public area');
  return { handle: handles[0]!, publicBytes, public: pub, name };
}

/** ReadPublic result. */
export interface ReadPublicResult {
  readonly publicBytes: Buffer;
  readonly public: TpmtPublic;
  readonly name: Buffer;
  readonly qualifiedName: Buffer;
}

export function parseReadPublicResponse(resp: Uint8Array): ReadPublicResult {
  const { params: r } = parseResponse(resp, 'ReadPublic');
  const publicBytes = r.tpm2b('outPublic');
  const name = r.tpm2b('name', 2 + 64);
  const qualifiedName = r.tpm2b('qualifiedName', 2 + 64);
  r.end();
  return { publicBytes, public: decodePublic(publicBytes), name, qualifiedName };
}

/** A quote: the signed TPMS_ATTEST and its TPMT_SIGNATURE, raw and parsed. */
export interface Quote {
  readonly attestBytes: Buffer;
  readonly attest: QuoteAttest;
  readonly signatureBytes: Buffer;
  readonly signature: TpmtSignature;
}

export function parseQuoteResponse(resp: Uint8Array): Quote {
  const { params: r } = parseResponse(resp, 'Quote');
  const attestBytes = r.tpm2b('quoted');
  const start = r.offset;
  const signature = readSignature(r);
  const signatureBytes = Buffer.from(r.buf.subarray(start, r.offset));
  r.end();
  return { attestBytes, attest: decodeQuoteAttest(attestBytes), signatureBytes, signature };
}

export function parsePcrEventResponse(resp: Uint8Array): TaggedDigest[] {
  const { params: r } = parseResponse(resp, 'PCR_Event');
  const digests = readDigestValues(r);
  r.end();
  return digests;
}

/** TPMS_NV_PUBLIC. */
export interface NvPublic {
  readonly nvIndex: number;
  readonly nameAlg: number;
  readonly attributes: number;
  readonly authPolicy: Buffer;
  readonly dataSize: number;
}

export function parseNvReadPublicResponse(resp: Uint8Array): { nvPublic: NvPublic; name: Buffer } {
  const { params: r } = parseResponse(resp, 'NV_ReadPublic');
  const p = r.sized('nvPublic', 'TPMS_NV_PUBLIC');
  const nvPublic: NvPublic = {
    nvIndex: p.u32('nvIndex'),
    nameAlg: p.u16('nameAlg'),
    attributes: p.u32('attributes'),
    authPolicy: p.tpm2b('authPolicy', 64),
    dataSize: p.u16('dataSize'),
  };
  p.end();
  const name = r.tpm2b('nvName', 2 + 64);
  r.end();
  return { nvPublic, name };
}

export function parseNvReadResponse(resp: Uint8Array): Buffer {
  const { params: r } = parseResponse(resp, 'NV_Read');
  const data = r.tpm2b('data');
  r.end();
  return data;
}

/** TPMS_CAPABILITY_DATA for the capabilities this client understands. */
export type CapabilityData =
  | { readonly capability: typeof TPM_CAP.PCRS; readonly pcrs: PcrSelection[] }
  | { readonly capability: typeof TPM_CAP.TPM_PROPERTIES; readonly properties: Array<{ property: number; value: number }> }
  | { readonly capability: typeof TPM_CAP.HANDLES; readonly handles: number[] }
  | { readonly capability: typeof TPM_CAP.ALGS; readonly algorithms: Array<{ alg: number; attributes: number }> }
  | { readonly capability: typeof TPM_CAP.COMMANDS; readonly commands: number[] };

/** Largest list we accept in a capability response. */
const MAX_CAP_ENTRIES = 1024;

export function parseGetCapabilityResponse(resp: Uint8Array): { moreData: boolean; data: CapabilityData } {
  const { params: r } = parseResponse(resp, 'GetCapability');
  const moreData = r.u8('moreData') !== 0;
  const capability = r.u32('capability');
  const count = (): number => {
    const n = r.u32('count');
    if (n > MAX_CAP_ENTRIES) throw new TpmParseError(r.what, `capability list count ${n} exceeds ${MAX_CAP_ENTRIES}`);
    return n;
  };
  let data: CapabilityData;
  switch (capability) {
    case TPM_CAP.PCRS:
      data = { capability, pcrs: readPcrSelection(r) };
      break;
    case TPM_CAP.TPM_PROPERTIES: {
      const n = count();
      const properties = [];
      for (let i = 0; i < n; i++) properties.push({ property: r.u32('property'), value: r.u32('value') });
      data = { capability, properties };
      break;
    }
    case TPM_CAP.HANDLES: {
      const n = count();
      const handles = [];
      for (let i = 0; i < n; i++) handles.push(r.u32('handle'));
      data = { capability, handles };
      break;
    }
    case TPM_CAP.ALGS: {
      const n = count();
      const algorithms = [];
      for (let i = 0; i < n; i++) algorithms.push({ alg: r.u16('alg'), attributes: r.u32('algProperties') });
      data = { capability, algorithms };
      break;
    }
    case TPM_CAP.COMMANDS: {
      const n = count();
      const commands = [];
      for (let i = 0; i < n; i++) commands.push(r.u32('commandAttributes'));
      data = { capability, commands };
      break;
    }
    default:
      throw new TpmParseError(r.what, `unsupported capability 0x${capability.toString(16)}`);
  }
  r.end();
  return { moreData, data };
}

/** Parses a response that carries no parameters (Startup, PCR_Extend, FlushContext). */
export function parseEmptyResponse(resp: Uint8Array, command: TpmCommandName): void {
  const { params } = parseResponse(resp, command);
  params.end();
}
