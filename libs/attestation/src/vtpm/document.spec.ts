import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AttestationError } from '../errors.js';
import { decodeDocument, encodeDocument, findSha256QuoteIndex, HASH_ALG, type TpmAttestation, type TpmQuote, type VtpmAttestationDocument } from './document.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const P0 = Buffer.alloc(32, 0).toString('base64');
const P1 = Buffer.alloc(32, 1).toString('base64');
const P2 = Buffer.alloc(32, 2).toString('base64');
const S1 = Buffer.alloc(20, 9).toString('base64');
const INFO = '{"zone":"us-central1-a","project_id":"proj","project_number":123456789012345678,"instance_name":"node-0","instance_id":18446744073709551615}';

/** What Go's encoding/json writes for a two-bank document with GCE instance info. */
const CANONICAL =
  `{"Attestation":{"ak_pub":"${b64('akpub')}","quotes":[` +
  `{"quote":"${b64('q1')}","raw_sig":"${b64('s1')}","pcrs":{"hash":4,"pcrs":{"0":"${S1}"}}},` +
  `{"quote":"${b64('q256')}","raw_sig":"${b64('s256')}","pcrs":{"hash":11,"pcrs":{"0":"${P0}","1":"${P1}","10":"${P2}","2":"${P2}"}}}],` +
  `"event_log":"${b64('log')}","instance_info":${INFO},"ak_cert":"${b64('cert')}","intermediate_certs":["${b64('i1')}","${b64('i2')}"],"TeeAttestation":null},` +
  `"InstanceInfo":"${b64('instance info')}","UserData":"${b64('Constellation')}"}`;

/** The same document as a Go decoder would accept it: other key casing, order, whitespace, nulls, duplicates. */
const HAND_WRITTEN = `{
  "attestation": {
    "TeeAttestation": null,
    "QUOTES": [
      { "Quote": "${b64('q1')}", "RAW_SIG": "${b64('s1')}", "Pcrs": { "Hash": 4, "PCRS": { "0": "${S1}" } } },
      { "quote": "${b64('q256')}", "raw_sig": "${b64('s256')}",
        "pcrs": { "pcrs": { "2": "${P2}", "10": "${P2}", "0": "${P0}", "1": "${P1}" }, "hash": 11 } }
    ],
    "Ak_Pub": "${b64('akpub')}",
    "Event_Log": "${b64('log')}",
    "canonical_event_log": "",
    "ak_cert": null,
    "AK_CERT": "${b64('cert')}",
    "instance_info": { "zone": "us-central1-a", "project_id": "proj", "project_number": 123456789012345678,
                       "instance_name": "node-0", "instance_id": 18446744073709551615 },
    "intermediate_certs": ["${b64('i1')}", "${b64('i2')}"],
    "unknown_field": {"ignored": [1, 2, 3]}
  },
  "instanceinfo": "${b64('instance info')}",
  "USERDATA": "${b64('ignored: the last duplicate wins')}",
  "UserData": "${b64('Constellation')}"
}`;

const malformedWith = (msg: string) => (e: unknown) =>
  e instanceof AttestationError && e.code === 'DOCUMENT_MALFORMED' && e.message.startsWith('unmarshaling TPM attestation document: ') && e.message.includes(msg);

describe('vTPM document codec', () => {
  it('decodes the canonical Go encoding', () => {
    const doc = decodeDocument(Buffer.from(CANONICAL));
    const att = doc.attestation!;
    assert.equal(att.akPub.toString(), 'akpub');
    assert.equal(att.quotes.length, 2);
    assert.equal(att.quotes[1]!.pcrs!.hash, HASH_ALG.SHA256);
    assert.deepEqual([...att.quotes[1]!.pcrs!.pcrs.keys()].sort((a, b) => a - b), [0, 1, 2, 10]);
    assert.ok(att.quotes[1]!.pcrs!.pcrs.get(10)!.equals(Buffer.alloc(32, 2)));
    assert.equal(att.instanceInfo, INFO);
    assert.equal(att.teeAttestation, null);
    assert.equal(att.canonicalEventLog.length, 0);
    assert.deepEqual(
      att.intermediateCerts.map(String),
      ['i1', 'i2'],
    );
    assert.equal(doc.instanceInfo!.toString(), 'instance info');
    assert.equal(doc.userData.toString(), 'Constellation');
  });

  it('re-encodes the canonical form byte-identically', () => assert.equal(encodeDocument(decodeDocument(CANONICAL)).toString(), CANONICAL));

  it('a hand-written Go-style document re-encodes to the canonical form', () => assert.equal(encodeDocument(decodeDocument(HAND_WRITTEN)).toString(), CANONICAL));

  it('keeps 64-bit numbers in instance info exactly', () => assert.ok(decodeDocument(CANONICAL).attestation!.instanceInfo!.includes('18446744073709551615')));

  const roundTrips: Array<[string, string]> = [
    ['nil attestation and instance info', `{"Attestation":null,"InstanceInfo":null,"UserData":"${b64('u')}"}`],
    ['empty attestation (all omitempty)', `{"Attestation":{"TeeAttestation":null},"InstanceInfo":"","UserData":""}`],
    ['nil quote in the list', `{"Attestation":{"quotes":[null,{"pcrs":{}}],"TeeAttestation":null},"InstanceInfo":null,"UserData":""}`],
    ['quote with hash only', `{"Attestation":{"quotes":[{"quote":"AQ==","pcrs":{"hash":12}}],"TeeAttestation":null},"InstanceInfo":null,"UserData":""}`],
    ['SNP TeeAttestation kept raw', `{"Attestation":{"ak_pub":"AQ==","TeeAttestation":{"SevSnpAttestation":{"report":{"policy":196608,"current_tcb":15352208710751387650},"certificate_chain":"AQID"}}},"InstanceInfo":null,"UserData":"AA=="}`],
    ['escapes in raw objects are kept', `{"Attestation":{"instance_info":{"zone":"a\\u003cb\\"c"},"TeeAttestation":null},"InstanceInfo":null,"UserData":""}`],
  ];
  for (const [name, json] of roundTrips) {
    it(`round-trips: ${name}`, () => assert.equal(encodeDocument(decodeDocument(json)).toString(), json));
  }

  const normalisations: Array<[string, string, string]> = [
    ['absent top-level keys', '{}', '{"Attestation":null,"InstanceInfo":null,"UserData":""}'],
    ['null UserData', '{"UserData":null}', '{"Attestation":null,"InstanceInfo":null,"UserData":""}'],
    ['whitespace inside raw objects is compacted', '{"Attestation":{"TeeAttestation": { "TdxAttestation" : { "a" : [ 1 , 2.50 ] } } }}', '{"Attestation":{"TeeAttestation":{"TdxAttestation":{"a":[1,2.50]}}},"InstanceInfo":null,"UserData":""}'],
    ['empty lists and bytes are omitted', '{"Attestation":{"quotes":[],"intermediate_certs":null,"event_log":"","ak_pub":null}}', '{"Attestation":{"TeeAttestation":null},"InstanceInfo":null,"UserData":""}'],
    ['leading-zero PCR key', '{"Attestation":{"quotes":[{"pcrs":{"hash":11,"pcrs":{"007":"AA=="}}}]}}', '{"Attestation":{"quotes":[{"pcrs":{"hash":11,"pcrs":{"7":"AA=="}}}],"TeeAttestation":null},"InstanceInfo":null,"UserData":""}'],
  ];
  for (const [name, input, want] of normalisations) {
    it(`normalises: ${name}`, () => assert.equal(encodeDocument(decodeDocument(input)).toString(), want));
  }

  it('encodes a constructed document like Go', () => {
    const quote: TpmQuote = { quote: Buffer.from([1]), rawSig: Buffer.alloc(0), pcrs: { hash: 11, pcrs: new Map([[15, Buffer.from([0xff])], [3, Buffer.from([0])]]) } };
    const att: TpmAttestation = { akPub: Buffer.from([2]), quotes: [quote], eventLog: Buffer.alloc(0), instanceInfo: null, canonicalEventLog: Buffer.alloc(0), akCert: Buffer.alloc(0), intermediateCerts: [], teeAttestation: null };
    const doc: VtpmAttestationDocument = { attestation: att, instanceInfo: null, userData: Buffer.from('u') };
    assert.equal(encodeDocument(doc).toString(), '{"Attestation":{"ak_pub":"Ag==","quotes":[{"quote":"AQ==","pcrs":{"hash":11,"pcrs":{"15":"/w==","3":"AA=="}}}],"TeeAttestation":null},"InstanceInfo":null,"UserData":"dQ=="}');
  });

  const bad: Array<[string, string, string]> = [
    ['empty input', '', 'unexpected end of JSON input at offset 0'],
    ['garbage', 'not json', 'invalid character "n" at offset 0'],
    ['truncated', CANONICAL.slice(0, 100), 'at offset'],
    ['truncated string', '{"UserData":"AAA', 'unterminated string'],
    ['trailing data', '{} {}', 'unexpected data after the top-level value'],
    ['trailing comma', '{"UserData":"",}', 'expected a string key'],
    ['top-level array', '[]', 'field (document): expected an object, got array'],
    ['top-level null', 'null', 'expected an object, got null'],
    ['Attestation not an object', '{"Attestation":"x"}', 'field Attestation: expected an object, got string'],
    ['bad base64', '{"UserData":"!!!!"}', 'field UserData: invalid base64'],
    ['unpadded base64', '{"InstanceInfo":"AQ"}', 'field InstanceInfo: invalid base64'],
    ['bytes as number', '{"UserData":5}', 'field UserData: expected a base64 string, got number'],
    ['quotes not an array', '{"Attestation":{"quotes":{}}}', 'field Attestation.quotes: expected an array, got object'],
    ['quote not an object', '{"Attestation":{"quotes":[1]}}', 'field Attestation.quotes[0]: expected an object, got number'],
    ['hash not an integer', '{"Attestation":{"quotes":[{"pcrs":{"hash":1.5}}]}}', 'field Attestation.quotes[0].pcrs.hash: expected an int32'],
    ['hash as string', '{"Attestation":{"quotes":[{"pcrs":{"hash":"11"}}]}}', 'expected an int32'],
    ['hash too large', '{"Attestation":{"quotes":[{"pcrs":{"hash":4294967296}}]}}', 'expected an int32'],
    ['negative PCR index', '{"Attestation":{"quotes":[{"pcrs":{"pcrs":{"-1":"AA=="}}}]}}', 'invalid PCR index "-1"'],
    ['PCR index too large', '{"Attestation":{"quotes":[{"pcrs":{"pcrs":{"4294967296":"AA=="}}}]}}', 'invalid PCR index'],
    ['PCR value not base64', '{"Attestation":{"quotes":[{"pcrs":{"pcrs":{"1":"*"}}}]}}', 'field Attestation.quotes[0].pcrs.pcrs.1: invalid base64'],
    ['instance_info a string', '{"Attestation":{"instance_info":"x"}}', 'field Attestation.instance_info: expected an object, got string'],
    ['TeeAttestation an array', '{"Attestation":{"TeeAttestation":[]}}', 'field Attestation.TeeAttestation: expected an object, got array'],
    ['invalid escape', '{"UserData":"\\x"}', 'invalid escape in string'],
    ['raw control character', '{"UserData":"a\nb"}', 'control character in string'],
    ['leading zero number', '{"Attestation":{"quotes":[{"pcrs":{"hash":011}}]}}', 'expected "," or "}"'],
    ['deep nesting', `{"Attestation":{"instance_info":${'['.repeat(100)}`, 'nesting deeper than 64'],
    ['very deep nesting', '['.repeat(200000), 'nesting deeper than 64'],
  ];
  for (const [name, input, msg] of bad) {
    it(`rejects ${name}`, () => assert.throws(() => decodeDocument(Buffer.from(input)), malformedWith(msg)));
  }

  it('reports the offset of syntax errors in details', () => {
    assert.throws(
      () => decodeDocument('{"UserData" 1}'),
      (e: unknown) => e instanceof AttestationError && e.details.offset === 12,
    );
  });
});

describe('vTPM document fuzzing', () => {
  const onlyAttestationErrors = (input: Uint8Array | string) => {
    try {
      const doc = decodeDocument(input);
      // Whatever decodes must re-encode to a fixed point.
      const once = encodeDocument(doc);
      assert.deepEqual(encodeDocument(decodeDocument(once)), once);
    } catch (err) {
      if (!(err instanceof AttestationError) || err.code !== 'DOCUMENT_MALFORMED') throw err;
    }
  };

  it('arbitrary strings', () => fc.assert(fc.property(fc.string({ maxLength: 300 }), onlyAttestationErrors), { numRuns: 500 }));
  it('arbitrary bytes', () => fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), onlyAttestationErrors), { numRuns: 500 }));
  it('arbitrary JSON values', () => fc.assert(fc.property(fc.json({ maxDepth: 6 }), onlyAttestationErrors), { numRuns: 500 }));

  it('random JSON in every field of a valid document', () => {
    const fields = ['Attestation', 'InstanceInfo', 'UserData', 'ak_pub', 'quotes', 'event_log', 'instance_info', 'canonical_event_log', 'ak_cert', 'intermediate_certs', 'TeeAttestation', 'quote', 'raw_sig', 'pcrs', 'hash'];
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.json({ maxDepth: 4 }), (field, value) => {
        onlyAttestationErrors(CANONICAL.replace(new RegExp(`"${field}":`), `"${field}":${value},"x${field}":`));
      }),
      { numRuns: 800 },
    );
  });

  it('byte mutations of a valid document', () => {
    const base = Buffer.from(CANONICAL);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'delete')), { minLength: 1, maxLength: 8 }), (edits) => {
        let b = Buffer.from(base);
        for (const [pos, byte, op] of edits) {
          const p = Math.min(pos, b.length - 1);
          if (op === 'set') b[p] = byte;
          else if (op === 'insert') b = Buffer.concat([b.subarray(0, p), Buffer.from([byte]), b.subarray(p)]);
          else b = Buffer.concat([b.subarray(0, p), b.subarray(p + 1)]);
        }
        onlyAttestationErrors(b);
      }),
      { numRuns: 1000 },
    );
  });

  it('every truncation of a valid document', () => {
    for (let n = 0; n < CANONICAL.length; n++) assert.throws(() => decodeDocument(CANONICAL.slice(0, n)), malformedWith(''));
  });
});

describe('findSha256QuoteIndex (TestGetSHA256QuoteIndex)', () => {
  const q = (hash: number | null): TpmQuote => ({ quote: Buffer.alloc(0), rawSig: Buffer.alloc(0), pcrs: hash === null ? null : { hash, pcrs: new Map() } });
  const att = (quotes: Array<TpmQuote | null>): TpmAttestation => ({ akPub: Buffer.alloc(0), quotes, eventLog: Buffer.alloc(0), instanceInfo: null, canonicalEventLog: Buffer.alloc(0), akCert: Buffer.alloc(0), intermediateCerts: [], teeAttestation: null });
  const cases: Array<[string, TpmAttestation | null, number | string]> = [
    ['SHA256 only', att([q(HASH_ALG.SHA256)]), 0],
    ['SHA1 then SHA256', att([q(HASH_ALG.SHA1), q(HASH_ALG.SHA256)]), 1],
    ['no quotes', att([]), 'attestation is missing quotes'],
    ['nil attestation', null, 'attestation is missing quotes'],
    ['two nil quotes', att([null, null]), 'quote is nil'],
    ['SHA1 then quote without PCRs', att([q(HASH_ALG.SHA1), q(null)]), 'no PCR data in attestation'],
    ['no SHA256 bank', att([q(HASH_ALG.SHA1), q(HASH_ALG.SHA384)]), 'attestation did not include SHA256 hashed PCRs'],
  ];
  for (const [name, a, want] of cases) {
    it(name, () => {
      if (typeof want === 'number') assert.equal(findSha256QuoteIndex(a), want);
      else assert.throws(() => findSha256QuoteIndex(a), (e: unknown) => e instanceof AttestationError && e.code === 'QUOTE_MISSING' && e.message === want);
    });
  }
});
