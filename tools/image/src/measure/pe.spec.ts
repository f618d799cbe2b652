import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { isAsterismError } from '@asterism/errors';
import { authenticodeSha256, parsePe, sectionData } from './pe.js';

/** A minimal PE32+ image: headers in 0x200 bytes, then `.text` (0x200 raw) and `.data` (raw 0x200, virtual 0x300). */
function tinyPe(): Buffer {
  const b = Buffer.alloc(0x600);
  b.writeUInt16LE(0x5a4d, 0);
  b.writeUInt32LE(0x40, 0x3c);
  b.writeUInt32LE(0x00004550, 0x40);
  b.writeUInt16LE(0x8664, 0x44);
  b.writeUInt16LE(2, 0x46);
  b.writeUInt16LE(240, 0x54);
  const opt = 0x58;
  b.writeUInt16LE(0x20b, opt);
  b.writeUInt32LE(0x200, opt + 60);
  b.writeUInt32LE(16, opt + 108);
  const table = opt + 240;
  const section = (i: number, name: string, vsize: number, va: number, raw: number, ptr: number) => {
    const h = table + i * 40;
    b.write(name, h, 'latin1');
    b.writeUInt32LE(vsize, h + 8);
    b.writeUInt32LE(va, h + 12);
    b.writeUInt32LE(raw, h + 16);
    b.writeUInt32LE(ptr, h + 20);
  };
  section(0, '.text', 0x200, 0x1000, 0x200, 0x200);
  section(1, '.data', 0x300, 0x2000, 0x200, 0x400);
  b.fill(0xaa, 0x200, 0x400);
  b.fill(0xbb, 0x400, 0x600);
  return b;
}

describe('PE reading', () => {
  it('reads the section table and gives sections as loaded (zero-filled to VirtualSize)', () => {
    const pe = parsePe(tinyPe());
    assert.deepEqual(pe.sections.map((s) => s.name), ['.text', '.data']);
    const data = sectionData(pe, '.data')!;
    assert.equal(data.length, 0x300);
    assert.equal(data[0x1ff], 0xbb);
    assert.equal(data[0x200], 0);
    assert.equal(sectionData(pe, '.linux'), undefined);
  });

  it('hashes headers and sections but not the CheckSum, the certificate entry or the certificate table', () => {
    const base = tinyPe();
    const h0 = authenticodeSha256(parsePe(base));
    // The whole file without the excluded fields is what gets hashed here (sections are in file order).
    const manual = createHash('sha256').update(base.subarray(0, 0x58 + 64)).update(base.subarray(0x58 + 68, 0x58 + 144)).update(base.subarray(0x58 + 152)).digest();
    assert.deepEqual(h0, manual);
    const checksum = Buffer.from(base);
    checksum.writeUInt32LE(0x12345678, 0x58 + 64);
    assert.deepEqual(authenticodeSha256(parsePe(checksum)), h0);
    // A signature appended as the certificate table (entry at 0x58+144) does not change the hash.
    const signed = Buffer.concat([base, Buffer.alloc(0x80, 0xcc)]);
    signed.writeUInt32LE(0x600, 0x58 + 144);
    signed.writeUInt32LE(0x80, 0x58 + 148);
    assert.deepEqual(authenticodeSha256(parsePe(signed)), h0);
    // Section bytes and unsigned trailing data do.
    const changed = Buffer.from(base);
    changed.writeUInt8(changed.readUInt8(0x450) ^ 1, 0x450);
    assert.notDeepEqual(authenticodeSha256(parsePe(changed)), h0);
    assert.notDeepEqual(authenticodeSha256(parsePe(Buffer.concat([base, Buffer.alloc(16)]))), h0);
  });

  it('refuses files that are not PE images with PE_INVALID', () => {
    for (const bad of [Buffer.alloc(10), Buffer.alloc(0x100), tinyPe().subarray(0, 0x300)]) {
      assert.throws(() => parsePe(bad), (e: unknown) => isAsterismError(e, 'PE_INVALID'));
    }
  });
});
