/**
 * PE/COFF reading for boot binaries (docs/protocol/node-image.md "What is measured where"):
 * the section table of a unified kernel image and the Authenticode image hash the firmware
 * extends into PCR 4 when it starts an EFI application (the same hash Secure Boot signs).
 */
import { createHash } from 'node:crypto';
import { ImageError } from '../errors.js';

/** One section header of a PE image. */
export interface PeSection {
  /** Name without trailing NULs (`.linux`, `.cmdline`, ...). */
  readonly name: string;
  readonly virtualSize: number;
  readonly virtualAddress: number;
  readonly sizeOfRawData: number;
  readonly pointerToRawData: number;
}

/** The parts of a PE image's headers the hashes need. */
export interface PeImage {
  readonly bytes: Buffer;
  /** File offset of the optional header's CheckSum field. */
  readonly checksumOffset: number;
  /** File offset of the certificate-table data directory entry (undefined: fewer than 5 directories). */
  readonly certDirOffset: number | undefined;
  /** Size of the attribute certificate table (0 when unsigned). */
  readonly certSize: number;
  readonly sizeOfHeaders: number;
  readonly sections: readonly PeSection[];
}

const PE32 = 0x10b;
const PE32_PLUS = 0x20b;
const SECTION_HEADER_SIZE = 40;

function fail(message: string, details: Record<string, unknown> = {}): never {
  throw new ImageError('PE_INVALID', `invalid PE image: ${message}`, { details });
}

function need(buf: Buffer, end: number, what: string): void {
  if (end > buf.length) fail(`${what} beyond the end of the file`, { end, size: buf.length });
}

/** Parses the headers and section table of a PE image; ImageError PE_INVALID when malformed. */
export function parsePe(bytes: Buffer): PeImage {
  need(bytes, 0x40, 'DOS header');
  if (bytes.readUInt16LE(0) !== 0x5a4d) fail('no MZ signature');
  const pe = bytes.readUInt32LE(0x3c);
  need(bytes, pe + 24, 'COFF header');
  if (bytes.readUInt32LE(pe) !== 0x00004550) fail('no PE signature', { offset: pe });
  const sectionCount = bytes.readUInt16LE(pe + 6);
  const optSize = bytes.readUInt16LE(pe + 20);
  const opt = pe + 24;
  need(bytes, opt + optSize, 'optional header');
  const magic = bytes.readUInt16LE(opt);
  if (magic !== PE32 && magic !== PE32_PLUS) fail(`unknown optional header magic 0x${magic.toString(16)}`);
  const dirCountOffset = opt + (magic === PE32_PLUS ? 108 : 92);
  const dirCount = bytes.readUInt32LE(dirCountOffset);
  const certDirOffset = dirCount > 4 ? dirCountOffset + 4 + 4 * 8 : undefined;
  const certSize = certDirOffset === undefined ? 0 : bytes.readUInt32LE(certDirOffset + 4);
  const sizeOfHeaders = bytes.readUInt32LE(opt + 60);
  const table = opt + optSize;
  need(bytes, table + sectionCount * SECTION_HEADER_SIZE, 'section table');
  const sections: PeSection[] = [];
  for (let i = 0; i < sectionCount; i++) {
    const h = table + i * SECTION_HEADER_SIZE;
    const section = {
      name: bytes.subarray(h, h + 8).toString('latin1').replace(/\0+$/, ''),
      virtualSize: bytes.readUInt32LE(h + 8),
      virtualAddress: bytes.readUInt32LE(h + 12),
      sizeOfRawData: bytes.readUInt32LE(h + 16),
      pointerToRawData: bytes.readUInt32LE(h + 20),
    };
    need(bytes, section.pointerToRawData + section.sizeOfRawData, `section ${section.name}`);
    sections.push(section);
  }
  if (sizeOfHeaders > bytes.length) fail('SizeOfHeaders beyond the end of the file');
  return { bytes, checksumOffset: opt + 64, certDirOffset, certSize, sizeOfHeaders, sections };
}

/**
 * The Authenticode hash (SHA-256) of a PE image, as the UEFI firmware measures an EFI application:
 * headers without the CheckSum and the certificate-table entry, the sections' raw data in file
 * order, then any trailing data except the certificate table.
 */
export function authenticodeSha256(image: PeImage): Buffer {
  const { bytes } = image;
  const h = createHash('sha256');
  const certDir = image.certDirOffset;
  if (certDir === undefined) {
    h.update(bytes.subarray(0, image.checksumOffset));
    h.update(bytes.subarray(image.checksumOffset + 4, image.sizeOfHeaders));
  } else {
    h.update(bytes.subarray(0, image.checksumOffset));
    h.update(bytes.subarray(image.checksumOffset + 4, certDir));
    h.update(bytes.subarray(certDir + 8, image.sizeOfHeaders));
  }
  let hashed = image.sizeOfHeaders;
  const ordered = [...image.sections].filter((s) => s.sizeOfRawData > 0).sort((a, b) => a.pointerToRawData - b.pointerToRawData);
  for (const s of ordered) {
    h.update(bytes.subarray(s.pointerToRawData, s.pointerToRawData + s.sizeOfRawData));
    hashed += s.sizeOfRawData;
  }
  const end = bytes.length - image.certSize;
  if (end > hashed) h.update(bytes.subarray(hashed, end));
  return h.digest();
}

/**
 * A section's bytes as they are in memory once loaded: VirtualSize bytes, the part beyond the raw
 * data zero-filled. systemd-stub measures and hands over these.
 */
export function sectionData(image: PeImage, name: string): Buffer | undefined {
  const s = image.sections.find((x) => x.name === name);
  if (!s) return undefined;
  const raw = image.bytes.subarray(s.pointerToRawData, s.pointerToRawData + Math.min(s.sizeOfRawData, s.virtualSize));
  return raw.length === s.virtualSize ? Buffer.from(raw) : Buffer.concat([raw, Buffer.alloc(s.virtualSize - raw.length)]);
}
