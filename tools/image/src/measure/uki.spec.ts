import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAsterismError } from '@asterism/errors';
import { sha256 } from './pcr.js';
import { stubPcr11Digests, ukiParts, type UkiSectionName } from './uki.js';
import type { PeImage } from './pe.js';

/** A PE image whose sections are the given buffers, laid out one after the other. */
function peWith(sections: Record<string, Buffer>): PeImage {
  let offset = 0;
  const parts: Buffer[] = [];
  const table = Object.entries(sections).map(([name, data]) => {
    const s = { name, virtualSize: data.length, virtualAddress: offset, sizeOfRawData: data.length, pointerToRawData: offset };
    parts.push(data);
    offset += data.length;
    return s;
  });
  return { bytes: Buffer.concat(parts), checksumOffset: 0, certDirOffset: undefined, certSize: 0, sizeOfHeaders: 0, sections: table };
}

describe('UKI sections', () => {
  it('measures name (with NUL) then data of each section in the stub order, whatever the file order, and skips .pcrsig', () => {
    const pe = peWith({ '.initrd': Buffer.from('INITRD'), '.cmdline': Buffer.from('ro quiet\0'), '.linux': Buffer.from('KERNEL'), '.pcrsig': Buffer.from('{}'), '.text': Buffer.from('stub') });
    const parts = ukiParts(pe);
    assert.equal(parts.cmdline, 'ro quiet');
    const expected = (['.linux', '.cmdline', '.initrd'] as UkiSectionName[]).flatMap((n) => [sha256(Buffer.from(`${n}\0`)), sha256(parts.sections.get(n)!)]);
    assert.deepEqual(stubPcr11Digests(parts), expected);
  });

  it('refuses a PE image without a kernel, initrd or command line (UKI_SECTION_MISSING)', () => {
    assert.throws(() => ukiParts(peWith({ '.linux': Buffer.from('k'), '.cmdline': Buffer.from('c') })), (e: unknown) => isAsterismError(e, 'UKI_SECTION_MISSING') && /\.initrd/.test((e as Error).message));
  });
});
