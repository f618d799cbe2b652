/**
 * The sections of a unified kernel image and what systemd-stub (systemd 252) measures of them
 * into PCR 11 (docs/protocol/node-image.md): for each section present, in the stub's fixed order,
 * the section name with its NUL byte, then the section's in-memory bytes. `.pcrsig` is not measured.
 */
import { ImageError } from '../errors.js';
import { sectionData, type PeImage } from './pe.js';
import { sha256 } from './pcr.js';

/** The UKI sections systemd 252's stub knows, in the order it measures them. */
export const UKI_SECTIONS = ['.linux', '.osrel', '.cmdline', '.initrd', '.splash', '.dtb', '.pcrsig', '.pcrpkey'] as const;

/** A UKI section name. */
export type UkiSectionName = (typeof UKI_SECTIONS)[number];

/** The sections of a UKI that matter for prediction. */
export interface UkiParts {
  readonly linux: Buffer;
  readonly initrd: Buffer;
  /** The kernel command line without trailing NULs or newline. */
  readonly cmdline: string;
  readonly osrel: string;
  /** Every UKI section present, by name. */
  readonly sections: ReadonlyMap<UkiSectionName, Buffer>;
}

/** Reads the UKI sections of a PE image; ImageError UKI_SECTION_MISSING without .linux/.initrd/.cmdline. */
export function ukiParts(image: PeImage): UkiParts {
  const sections = new Map<UkiSectionName, Buffer>();
  for (const name of UKI_SECTIONS) {
    const data = sectionData(image, name);
    if (data) sections.set(name, data);
  }
  const get = (name: UkiSectionName): Buffer => {
    const data = sections.get(name);
    if (!data) throw new ImageError('UKI_SECTION_MISSING', `the boot binary has no ${name} section: not a unified kernel image`, { details: { section: name } });
    return data;
  };
  const text = (b: Buffer): string => b.toString('utf8').replace(/[\0\n]+$/, '');
  return { linux: get('.linux'), initrd: get('.initrd'), cmdline: text(get('.cmdline')), osrel: text(sections.get('.osrel') ?? Buffer.alloc(0)), sections };
}

/** The digests systemd-stub extends into PCR 11 for these sections, in order. */
export function stubPcr11Digests(parts: Pick<UkiParts, 'sections'>): Buffer[] {
  const digests: Buffer[] = [];
  for (const name of UKI_SECTIONS) {
    const data = parts.sections.get(name);
    if (!data || name === '.pcrsig') continue;
    digests.push(sha256(Buffer.from(`${name}\0`, 'latin1')), sha256(data));
  }
  return digests;
}
