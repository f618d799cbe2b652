/**
 * The SNP variants' instance info: Go JSON of the reference's SNP instance-info struct
 * (docs/protocol/sev-snp.md §7). Decoding accepts what Go accepts (case-insensitive keys, the
 * last duplicate wins, null for nil); GCE numbers are unsigned 64-bit and kept exact. Encoding
 * writes Go's bytes in the struct's field order.
 */
import { AttestationError } from '../errors.js';
import { goJsonString } from '../measurements/go-json-string.js';
import { bytes, isNil, JsonParser, member, object, type JsonNode } from '../vtpm/json-tree.js';

/** GCE instance identity (go-tpm-tools GCEInstanceInfo; JSON keys snake_case, omitempty). */
export interface GceInstanceInfo {
  readonly zone: string;
  readonly projectId: string;
  /** uint64; 0n = absent. */
  readonly projectNumber: bigint;
  readonly instanceName: string;
  /** uint64; 0n = absent. */
  readonly instanceId: bigint;
}

/** Azure part: the HCL runtime data and an optional MAA token. */
export interface AzureInstanceInfo {
  readonly runtimeData: Buffer;
  readonly maaToken: string;
}

/** Decoded instance info of aws-sev-snp, azure-sev-snp and gcp-sev-snp documents. */
export interface SnpInstanceInfo {
  /** PEM of the VCEK/VLEK; empty = none. */
  readonly reportSigner: Buffer;
  /** PEM of the ASK (and maybe ARK); empty = none. */
  readonly certChain: Buffer;
  readonly attestationReport: Buffer;
  readonly azure: AzureInstanceInfo | null;
  readonly gcp: GceInstanceInfo | null;
}

const UINT64_MAX = (1n << 64n) - 1n;
const malformed = (path: string, why: string) => new AttestationError('DOCUMENT_MALFORMED', `field ${path}: ${why}`, { details: { field: path } });

function str(n: JsonNode | undefined, path: string): string {
  if (isNil(n)) return '';
  if (n.kind !== 'string') throw malformed(path, `expected a string, got ${n.kind}`);
  return n.value;
}

function uint64(n: JsonNode | undefined, path: string): bigint {
  if (isNil(n)) return 0n;
  if (n.kind !== 'number' || !/^(0|[1-9][0-9]*)$/.test(n.raw)) throw malformed(path, 'expected an unsigned integer');
  const v = BigInt(n.raw);
  if (v > UINT64_MAX) throw malformed(path, 'number out of range for uint64');
  return v;
}

function gce(n: JsonNode, path: string): GceInstanceInfo {
  const o = object(n, path);
  return {
    zone: str(member(o, 'zone'), `${path}.zone`),
    projectId: str(member(o, 'project_id'), `${path}.project_id`),
    projectNumber: uint64(member(o, 'project_number'), `${path}.project_number`),
    instanceName: str(member(o, 'instance_name'), `${path}.instance_name`),
    instanceId: uint64(member(o, 'instance_id'), `${path}.instance_id`),
  };
}

function azure(n: JsonNode, path: string): AzureInstanceInfo {
  const o = object(n, path);
  return { runtimeData: bytes(member(o, 'RuntimeData'), `${path}.RuntimeData`), maaToken: str(member(o, 'MAAToken'), `${path}.MAAToken`) };
}

/** Decodes instance info bytes; any problem is DOCUMENT_MALFORMED naming the field. */
export function decodeSnpInstanceInfo(data: Uint8Array | null): SnpInstanceInfo {
  if (data === null || data.length === 0) throw malformed('InstanceInfo', 'SNP instance info is missing');
  try {
    const root = object(new JsonParser(Buffer.from(data).toString('utf8')).parse(), 'InstanceInfo');
    const az = member(root, 'Azure');
    const gcp = member(root, 'GCP');
    return {
      reportSigner: bytes(member(root, 'ReportSigner'), 'InstanceInfo.ReportSigner'),
      certChain: bytes(member(root, 'CertChain'), 'InstanceInfo.CertChain'),
      attestationReport: bytes(member(root, 'AttestationReport'), 'InstanceInfo.AttestationReport'),
      azure: isNil(az) ? null : azure(az, 'InstanceInfo.Azure'),
      gcp: isNil(gcp) ? null : gce(gcp, 'InstanceInfo.GCP'),
    };
  } catch (err) {
    const e = err instanceof AttestationError ? err : undefined;
    throw new AttestationError('DOCUMENT_MALFORMED', `unmarshaling SNP instance info: ${e?.message ?? String(err)}`, { details: { ...e?.details }, cause: err });
  }
}

const b64OrNull = (b: Uint8Array) => (b.length === 0 ? 'null' : `"${Buffer.from(b).toString('base64')}"`);

function encodeGce(g: GceInstanceInfo): string {
  const fields: string[] = [];
  if (g.zone) fields.push(`"zone":${goJsonString(g.zone)}`);
  if (g.projectId) fields.push(`"project_id":${goJsonString(g.projectId)}`);
  if (g.projectNumber) fields.push(`"project_number":${g.projectNumber.toString()}`);
  if (g.instanceName) fields.push(`"instance_name":${goJsonString(g.instanceName)}`);
  if (g.instanceId) fields.push(`"instance_id":${g.instanceId.toString()}`);
  return `{${fields.join(',')}}`;
}

/** Go JSON of the instance info (empty byte fields are Go nil slices: `null`). */
export function encodeSnpInstanceInfo(info: SnpInstanceInfo): Buffer {
  const az = info.azure ? `{"RuntimeData":${b64OrNull(info.azure.runtimeData)},"MAAToken":${goJsonString(info.azure.maaToken)}}` : 'null';
  const gcp = info.gcp ? encodeGce(info.gcp) : 'null';
  return Buffer.from(
    `{"ReportSigner":${b64OrNull(info.reportSigner)},"CertChain":${b64OrNull(info.certChain)},"AttestationReport":${b64OrNull(info.attestationReport)},"Azure":${az},"GCP":${gcp}}`,
  );
}
