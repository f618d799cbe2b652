/**
 * The PCK certificate's Intel SGX extension (docs/protocol/tdx-dcap.md): the platform's TCB
 * (16 SGX component SVNs, PCE SVN, CPU SVN), its PCE ID and FMSPC, which select and match the
 * TCB info collateral.
 */
import { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import { AttestationError } from '../errors.js';

/** OID of the SGX extension and its members. */
export const SGX_EXTENSION_OID = '1.2.840.113741.1.13.1';
const TCB_OID = `${SGX_EXTENSION_OID}.2`;
const PCEID_OID = `${SGX_EXTENSION_OID}.3`;
const FMSPC_OID = `${SGX_EXTENSION_OID}.4`;

/** The platform facts the PCK certificate attests. */
export interface PckTcb {
  /** 16 SGX TCB component SVNs. */
  sgxComponents: number[];
  pceSvn: number;
  /** 16 bytes. */
  cpuSvn: Buffer;
  /** 2 bytes. */
  pceId: Buffer;
  /** 6 bytes. */
  fmspc: Buffer;
}

/** Splits a PEM bundle into certificates, failing with CERT_CHAIN_INVALID on any bad block. */
export function parsePemChain(pem: string, what: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new AttestationError('CERT_CHAIN_INVALID', `${what}: no PEM certificate`, { details: { chain: what } });
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch (cause) {
      throw new AttestationError('CERT_CHAIN_INVALID', `${what}: certificate ${index} does not parse`, { details: { chain: what, index }, cause });
    }
  });
}

/** Reads the SGX extension of a PCK certificate. */
export function readPckTcb(cert: X509Certificate): PckTcb {
  const ext = findExtension(cert.raw, SGX_EXTENSION_OID);
  if (!ext) throw bad('the PCK certificate has no SGX extension');
  const members = new Map<string, asn1js.AsnType>();
  for (const item of sequenceItems(fromDer(ext, 'SGX extension'), 'SGX extension')) {
    const [oid, value] = sequenceItems(item, 'SGX extension member');
    if (oid instanceof asn1js.ObjectIdentifier && value) members.set(oid.valueBlock.toString(), value);
  }
  const tcb = members.get(TCB_OID);
  if (!tcb) throw bad('the SGX extension has no TCB');
  const comps = new Map<string, asn1js.AsnType>();
  for (const item of sequenceItems(tcb, 'SGX TCB')) {
    const [oid, value] = sequenceItems(item, 'SGX TCB member');
    if (oid instanceof asn1js.ObjectIdentifier && value) comps.set(oid.valueBlock.toString(), value);
  }
  const sgxComponents = Array.from({ length: 16 }, (_, i) => integer(comps.get(`${TCB_OID}.${i + 1}`), `SGX TCB component ${i + 1}`));
  return {
    sgxComponents,
    pceSvn: integer(comps.get(`${TCB_OID}.17`), 'PCE SVN'),
    cpuSvn: octets(comps.get(`${TCB_OID}.18`), 'CPU SVN', 16),
    pceId: octets(members.get(PCEID_OID), 'PCE ID', 2),
    fmspc: octets(members.get(FMSPC_OID), 'FMSPC', 6),
  };
}

/** The extnValue bytes of the extension `oid` of a DER certificate (undefined when absent). */
export function findExtension(certDer: Buffer, oid: string): Buffer | undefined {
  const [tbs] = sequenceItems(fromDer(certDer, 'PCK certificate'), 'PCK certificate');
  for (const item of sequenceItems(tbs, 'TBS certificate')) {
    if (item.idBlock.tagClass !== 3 || item.idBlock.tagNumber !== 3) continue;
    const [extensions] = (item as asn1js.Constructed).valueBlock.value;
    for (const ext of sequenceItems(extensions, 'extensions')) {
      const parts = sequenceItems(ext, 'extension');
      const id = parts[0];
      const value = parts[parts.length - 1];
      if (id instanceof asn1js.ObjectIdentifier && id.valueBlock.toString() === oid && value instanceof asn1js.OctetString) {
        return Buffer.from(value.valueBlock.valueHexView);
      }
    }
  }
  return undefined;
}

function fromDer(der: Uint8Array, what: string): asn1js.AsnType {
  const parsed = asn1js.fromBER(der);
  if (parsed.offset === -1 || parsed.offset !== der.byteLength) throw bad(`${what} is not valid DER`);
  return parsed.result;
}

function sequenceItems(node: asn1js.AsnType | undefined, what: string): asn1js.AsnType[] {
  if (!(node instanceof asn1js.Sequence)) throw bad(`${what} is not a SEQUENCE`);
  return node.valueBlock.value;
}

function integer(node: asn1js.AsnType | undefined, what: string): number {
  if (!(node instanceof asn1js.Integer) && !(node instanceof asn1js.Enumerated)) throw bad(`${what} is missing or not an INTEGER`);
  const value = node.valueBlock.valueDec;
  if (!Number.isSafeInteger(value) || value < 0) throw bad(`${what} is out of range`);
  return value;
}

function octets(node: asn1js.AsnType | undefined, what: string, length: number): Buffer {
  if (!(node instanceof asn1js.OctetString)) throw bad(`${what} is missing or not an OCTET STRING`);
  const value = Buffer.from(node.valueBlock.valueHexView);
  if (value.length !== length) throw bad(`${what} is ${value.length} bytes, not ${length}`);
  return value;
}

function bad(message: string): AttestationError {
  return new AttestationError('CERT_CHAIN_INVALID', `PCK certificate: ${message}`, { details: { check: 'pck-extension' } });
}
