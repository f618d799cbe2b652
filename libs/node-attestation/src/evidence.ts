/**
 * What one verification of a running node saw, kept compact so the what-if check
 * (docs/protocol/continuous-attestation.md) can judge a proposed attestation config against every
 * node's latest evidence without asking the nodes again. Only measured register values and the
 * attestation key's digest are kept: the document itself (signatures, event log) is not.
 */
import { createHash } from 'node:crypto';
import {
  attestationKeyDigest,
  decodeDocument,
  decodeTdxDocument,
  findSha256QuoteIndex,
  parseTdxQuote,
  tdMeasurements,
  variantDescriptor,
  type Variant,
} from '@asterism/attestation';

/** How a node's registers are numbered: vTPM PCRs (SHA-256 bank), TD measurements (MRTD, RTMR0..3 as 0..4), or none (dummy). */
export type RegisterKind = 'PCR' | 'TD' | 'none';

/** The compact record of one verification (stored as a Node annotation). */
export interface EvidenceSummary {
  /** Attestation variant name of the document. */
  variant: string;
  /** RFC 3339 time of the verification. */
  at: string;
  registers: RegisterKind;
  /** Register index -> lower-case hex, as the document reported them (before any judgement). */
  values: Record<string, string>;
  /** `sha256:<hex>` of the attestation key, `none:<variant>` without one, '' when unreadable. */
  akDigest: string;
}

/** The registers of a document by index, read without judging it (a refused node still gets them). */
export function registersOf(variant: Variant, document: Uint8Array): { kind: RegisterKind; values: Map<number, Buffer> } {
  try {
    const descriptor = variantDescriptor(variant);
    if (descriptor.insecure) return { kind: 'none', values: new Map() };
    if (descriptor.platform === 'tdx') return { kind: 'TD', values: tdMeasurements(parseTdxQuote(decodeTdxDocument(document).rawQuote).body) };
    const doc = decodeDocument(document);
    const quote = doc.attestation?.quotes[findSha256QuoteIndex(doc.attestation)];
    return { kind: 'PCR', values: new Map(quote?.pcrs?.pcrs ?? []) };
  } catch {
    // Malformed: the validator says why; the summary just has no values.
    return { kind: variantDescriptor(variant).platform === 'tdx' ? 'TD' : 'PCR', values: new Map() };
  }
}

/** The AK digest of a document, or '' when the document has none that can be read. */
export function akDigestOf(variant: Variant, document: Uint8Array): string {
  try {
    return attestationKeyDigest(variant, document);
  } catch {
    return '';
  }
}

/** Builds the summary of one document. */
export function summarize(variant: Variant, document: Uint8Array, at: Date): EvidenceSummary {
  const { kind, values } = registersOf(variant, document);
  const hex: Record<string, string> = {};
  for (const [index, value] of [...values].sort((a, b) => a[0] - b[0])) hex[String(index)] = value.toString('hex');
  return { variant: variant.name, at: at.toISOString(), registers: kind, values: hex, akDigest: akDigestOf(variant, document) };
}

/** The registers of a stored summary as the comparison functions take them. */
export function summaryValues(s: EvidenceSummary): Map<number, Buffer> {
  return new Map(Object.entries(s.values).map(([k, v]) => [Number(k), Buffer.from(v, 'hex')]));
}

/** Parses a stored summary; undefined for anything that is not one (an operator's edit, an older format). */
export function parseSummary(text: string | undefined): EvidenceSummary | undefined {
  if (!text) return undefined;
  try {
    const o = JSON.parse(text) as Partial<EvidenceSummary>;
    if (typeof o.variant !== 'string' || typeof o.at !== 'string' || typeof o.akDigest !== 'string') return undefined;
    if (o.registers !== 'PCR' && o.registers !== 'TD' && o.registers !== 'none') return undefined;
    if (!o.values || typeof o.values !== 'object') return undefined;
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.values)) {
      if (!/^\d{1,2}$/.test(k) || typeof v !== 'string' || !/^[0-9a-f]*$/.test(v)) return undefined;
      values[k] = v;
    }
    return { variant: o.variant, at: o.at, registers: o.registers, values, akDigest: o.akDigest };
  } catch {
    return undefined;
  }
}

/** PCR 15 (SHA-256 bank) of a node marked once with `clusterId`: SHA256(0^32 || SHA256(clusterId)) (docs/protocol/verification.md). */
export function clusterMarkPcr(clusterId: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.alloc(32)).update(createHash('sha256').update(clusterId).digest()).digest();
}

/** RTMR2 of a TD marked once with `clusterId`: SHA384(0^48 || SHA384(clusterId)) (docs/protocol/tdx-dcap.md). */
export function clusterMarkRtmr(clusterId: Uint8Array): Buffer {
  return createHash('sha384').update(Buffer.alloc(48)).update(createHash('sha384').update(clusterId).digest()).digest();
}
