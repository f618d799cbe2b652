import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { checkGceSevPlatform, EV_NONHOST_INFO, EV_S_CRTM_VERSION, GCE_TECHNOLOGY, gceFirmwareVersion } from './platform-state.js';

const u32 = (n: number) => Buffer.from(Uint32Array.of(n).buffer);
const HEADER = Buffer.from('000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000', 'hex');
/** A crypto-agile event; `digestOf` lets a case measure other data than it carries. */
function event(pcr: number, type: number, data: Buffer, digestOf: Buffer = data): Buffer {
  return Buffer.concat([
    u32(pcr), u32(type), u32(2),
    Buffer.from([0x04, 0x00]), createHash('sha1').update(digestOf).digest(),
    Buffer.from([0x0b, 0x00]), createHash('sha256').update(digestOf).digest(),
    u32(data.length), data,
  ]);
}
const crtm = (text: string) => Buffer.from(`${text}\0`, 'utf16le');
const nonHost = (tech: number) => Buffer.concat([Buffer.from('GCE NonHostInfo\0', 'latin1'), Buffer.from([tech]), Buffer.alloc(15)]);
const log = (...events: Buffer[]) => Buffer.concat([HEADER, ...events]);

describe('GCE platform state (gcp-sev-es CVM check)', () => {
  const versions: Array<[string, Buffer, number]> = [
    ['version 1', crtm('GCE Virtual Firmware v1'), 1],
    ['version 2', crtm('GCE Virtual Firmware v2'), 2],
    ['another vendor', crtm('EDK II 1.0'), 0],
    ['no digits', crtm('GCE Virtual Firmware v'), 0],
    ['ASCII instead of UCS-2', Buffer.from('GCE Virtual Firmware v1\0'), 0],
  ];
  for (const [name, data, want] of versions) it(`firmware version: ${name} -> ${want}`, () => assert.equal(gceFirmwareVersion(data), want));

  const ok = (v: number) => event(0, EV_S_CRTM_VERSION, crtm(`GCE Virtual Firmware v${v}`));
  const tech = (t: number) => event(0, EV_NONHOST_INFO, nonHost(t));
  const cases: Array<[string, Buffer, string | null]> = [
    ['GCE v1 with AMD SEV', log(ok(1), tech(GCE_TECHNOLOGY.AMD_SEV)), null],
    ['GCE v2 with AMD SEV', log(ok(2), tech(GCE_TECHNOLOGY.AMD_SEV)), null],
    ['version 0', log(ok(0), tech(GCE_TECHNOLOGY.AMD_SEV)), 'gce-version'],
    ['no S-CRTM event', log(tech(GCE_TECHNOLOGY.AMD_SEV)), 'gce-version'],
    ['technology NONE', log(ok(1), tech(GCE_TECHNOLOGY.NONE)), 'technology'],
    ['technology AMD_SEV_ES (not what the variant requires)', log(ok(1), tech(GCE_TECHNOLOGY.AMD_SEV_ES)), 'technology'],
    ['no NonHostInfo event', log(ok(1)), 'technology'],
    ['events in PCR 1 do not count', log(event(1, EV_S_CRTM_VERSION, crtm('GCE Virtual Firmware v1')), event(1, EV_NONHOST_INFO, nonHost(1))), 'gce-version'],
    ['data differs from what was measured', log(ok(1), event(0, EV_NONHOST_INFO, nonHost(1), nonHost(2))), 'event-digest'],
    ['empty log', Buffer.alloc(0), 'event-log'],
  ];
  for (const [name, raw, check] of cases) {
    it(`${check === null ? 'accepts' : 'refuses'}: ${name}`, () => {
      if (check === null) return void checkGceSevPlatform(raw);
      assert.throws(() => checkGceSevPlatform(raw), (e: unknown) => e instanceof AttestationError && e.code === 'PLATFORM_CHECK_FAILED' && e.details.check === check);
    });
  }
});
