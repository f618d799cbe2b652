import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { attestationKeyDigest } from './ak-digest.js';
import { AttestationError } from './errors.js';
import { Variant } from './variants/table.js';
import { encodeDocument } from './vtpm/document.js';

const VTPM = Variant.fromString('qemu-vtpm');

/** A vTPM document whose only distinguishing part is its AK. */
function vtpmDocument(akPub: Buffer): Buffer {
  const attestation = { akPub, quotes: [], eventLog: Buffer.alloc(0), instanceInfo: null, canonicalEventLog: Buffer.alloc(0), akCert: Buffer.alloc(0), intermediateCerts: [], teeAttestation: null };
  return encodeDocument({ attestation, instanceInfo: null, userData: Buffer.alloc(32) });
}

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const typed = (code: string) => (e: unknown) => e instanceof AttestationError && e.code === code;

describe('attestationKeyDigest (docs/adr/0008)', () => {
  it('is sha256 of ak_pub: equal for the same AK, different for another', () => {
    const ak1 = Buffer.from('ak-one'), ak2 = Buffer.from('ak-two');
    assert.equal(attestationKeyDigest(VTPM, vtpmDocument(ak1)), sha(ak1));
    assert.notEqual(attestationKeyDigest(VTPM, vtpmDocument(ak1)), attestationKeyDigest(VTPM, vtpmDocument(ak2)));
    assert.equal(attestationKeyDigest(Variant.fromString('azure-trustedlaunch'), vtpmDocument(ak1)), sha(ak1));
  });

  for (const name of ['dummy', 'qemu-tdx'] as const) {
    it(`${name} documents carry no AK: one shared marker`, () => assert.equal(attestationKeyDigest(Variant.fromString(name), Buffer.from('anything')), `none:${name}`));
  }

  const bad: Array<[string, Buffer, string]> = [
    ['not JSON', Buffer.from('not json'), 'DOCUMENT_MALFORMED'],
    ['no attestation', Buffer.from('{"UserData":""}'), 'AK_MISSING'],
    ['an empty ak_pub', vtpmDocument(Buffer.alloc(0)), 'AK_MISSING'],
  ];
  for (const [name, doc, code] of bad) it(`refuses a document with ${name}: ${code}`, () => assert.throws(() => attestationKeyDigest(VTPM, doc), typed(code)));
});
