import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { range, TPM_ALG, TPM_HT, type TpmClient } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { validatorFromConfigJson } from '../choose.js';
import { AttestationError } from '../errors.js';
import type { AttestationLogger } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { withAllBytes, type Measurement } from '../measurements/measurement.js';
import { attestationKeyDigest } from '../ak-digest.js';
import { decodeDocument, encodeDocument, HASH_ALG } from '../vtpm/document.js';
import { QemuVtpmIssuer, QemuVtpmValidator } from './qemu-vtpm.js';
import { VtpmValidator } from '../vtpm/validator.js';
import { Variant } from './table.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
const USER_DATA = Buffer.from('Constellation');
/** The minimal crypto-agile event log header of docs/protocol/vtpm-attestation.md (SHA-1 + SHA-256 banks, no events). */
const MIN_EVENT_LOG = Buffer.from(
  '000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000',
  'hex',
);

const rejects = (code: string, re?: RegExp) => (e: unknown) => {
  assert.ok(e instanceof AttestationError, `expected AttestationError, got ${String(e)}`);
  assert.equal(e.code, code, e.message);
  if (re) assert.match(e.message, re);
  return true;
};

class CollectingLogger implements AttestationLogger {
  warnings: string[] = [];
  info(): void {
    return undefined;
  }
  warn(msg: string): void {
    this.warnings.push(msg);
  }
}

describe('qemu-vtpm issuer and validator on swtpm', { skip }, () => {
  let tpm: Swtpm;
  let c: TpmClient;
  let issuer: QemuVtpmIssuer;
  /** Enforce the current SHA-256 values of PCRs 0-23 (PCR 15 must be zero). */
  let expected: Measurements;

  before(async () => {
    tpm = await startSwtpm();
    c = await tpm.client();
    // Make the "boot" measurements non-trivial.
    await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update('kernel').digest() }]);
    issuer = new QemuVtpmIssuer(() => tpm.client(), async () => MIN_EVENT_LOG);
    expected = await currentMeasurements();
  });
  after(async () => tpm?.stop());

  async function currentMeasurements(): Promise<Measurements> {
    const m = new Measurements();
    for (const [i, v] of await c.pcrRead(range(24))) m.set(i, { expected: v, validationOpt: 'Enforce' } as Measurement);
    return m;
  }

  it('issue -> validate round trip returns the user data; the document has the reference shape', async () => {
    const nonce = randomBytes(32);
    const raw = await issuer.issue(USER_DATA, nonce);
    const text = Buffer.from(raw).toString();
    assert.match(text, /^\{"Attestation":\{"ak_pub":"[^"]+","quotes":\[/);
    assert.match(text, /"InstanceInfo":null,"UserData":"Q29uc3RlbGxhdGlvbg=="\}$/);
    const doc = decodeDocument(raw);
    assert.deepEqual(doc.attestation!.quotes.map((q) => q!.pcrs!.hash), [HASH_ALG.SHA1, HASH_ALG.SHA256, HASH_ALG.SHA384, HASH_ALG.SHA512]);
    assert.equal(doc.attestation!.quotes[1]!.pcrs!.pcrs.size, 24);
    const out = await new QemuVtpmValidator(expected).validate(raw, nonce);
    assert.deepEqual(Buffer.from(out), USER_DATA);
  });

  it('is built from the attestation config JSON through the registry', async () => {
    const nonce = randomBytes(32);
    const json = JSON.stringify({ measurements: Object.fromEntries([...expected].map(([i, m]) => [String(i), { expected: m.expected.toString('hex'), warnOnly: false }])) });
    const v = validatorFromConfigJson(json, 'qemu-vtpm');
    assert.ok(v instanceof QemuVtpmValidator);
    assert.deepEqual(Buffer.from(await v.validate(await issuer.issue(USER_DATA, nonce), nonce)), USER_DATA);
  });

  it('rejects a wrong nonce', async () => {
    const raw = await issuer.issue(USER_DATA, randomBytes(32));
    await assert.rejects(new QemuVtpmValidator(expected).validate(raw, randomBytes(32)), rejects('NONCE_MISMATCH', /not bound to this nonce and user data/));
  });

  it('rejects wrong user data (UserData replaced, or another document\'s attestation spliced in)', async () => {
    const nonce = randomBytes(32);
    const doc = decodeDocument(await issuer.issue(USER_DATA, nonce));
    const v = new QemuVtpmValidator(expected);
    await assert.rejects(v.validate(encodeDocument({ ...doc, userData: Buffer.from('wrong data') }), nonce), rejects('NONCE_MISMATCH'));
    const other = decodeDocument(await issuer.issue(Buffer.from([2, 3]), nonce));
    await assert.rejects(v.validate(encodeDocument({ ...other, attestation: doc.attestation }), nonce), rejects('NONCE_MISMATCH'));
  });

  it('rejects a changed PCR (enforced) naming PCR, expected and actual; warn-only mismatches only warn', async () => {
    const before4 = expected.get(4)!.expected;
    await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update('evil kernel').digest() }]);
    const after4 = (await c.pcrRead([4])).get(4)!;
    const nonce = randomBytes(32);
    const raw = await issuer.issue(USER_DATA, nonce);
    await assert.rejects(new QemuVtpmValidator(expected).validate(raw, nonce), (e: unknown) => {
      rejects('MEASUREMENT_MISMATCH', new RegExp(`PCR\\[4\\] expected ${before4.toString('hex').slice(0, 8)}… got ${after4.toString('hex').slice(0, 8)}…`))(e);
      const m = (e as AttestationError).details.mismatches as Array<Record<string, unknown>>;
      assert.deepEqual(m, [{ index: 4, expected: before4.toString('hex'), actual: after4.toString('hex'), enforced: true }]);
      return true;
    });
    const warnOnly = new Measurements(expected);
    warnOnly.set(4, { expected: before4, validationOpt: 'WarnOnly' });
    const log = new CollectingLogger();
    assert.deepEqual(Buffer.from(await new QemuVtpmValidator(warnOnly, log).validate(raw, nonce)), USER_DATA);
    assert.deepEqual(log.warnings, [`Encountered untrusted measurement value ${after4.toString('hex')} at index 4`]);
    expected = await currentMeasurements();
  });

  it('rejects tampered quote bytes, tampered PCR values, a substituted AK and a missing SHA-256 quote', async () => {
    const nonce = randomBytes(32);
    const doc = decodeDocument(await issuer.issue(USER_DATA, nonce));
    const v = new QemuVtpmValidator(expected);
    const att = doc.attestation!;
    const sha256 = att.quotes[1]!;

    const flipped = Buffer.from(sha256.quote);
    flipped[flipped.length - 3]! ^= 1;
    const withQuote = (q: typeof sha256) => encodeDocument({ ...doc, attestation: { ...att, quotes: att.quotes.map((x, i) => (i === 1 ? q : x)) } });
    await assert.rejects(v.validate(withQuote({ ...sha256, quote: flipped }), nonce), rejects('QUOTE_SIGNATURE_INVALID'));

    // Claimed PCR values that differ from what was quoted (here: pretend PCR 4 still has its old value).
    const lying = new Map(sha256.pcrs!.pcrs).set(9, Buffer.alloc(32, 9));
    await assert.rejects(v.validate(withQuote({ ...sha256, pcrs: { hash: HASH_ALG.SHA256, pcrs: lying } }), nonce), rejects('PCR_DIGEST_MISMATCH'));

    // Another (ECC) AK in ak_pub: the quote does not verify with it.
    const ecc = await c.createAttestationKey('ecc', 'owner');
    await c.flushContext(ecc.handle);
    await assert.rejects(v.validate(encodeDocument({ ...doc, attestation: { ...att, akPub: ecc.publicBytes } }), nonce), rejects('QUOTE_SIGNATURE_INVALID'));
    // A validator that trusts a fixed key sees the substitution itself.
    const pinned = new VtpmValidator({ variant: Variant.fromString('qemu-vtpm'), measurements: expected, logger: new CollectingLogger(), getTrustedKey: async () => ecc.public });
    await assert.rejects(pinned.validate(encodeDocument(doc), nonce), rejects('AK_MISMATCH'));

    await assert.rejects(v.validate(encodeDocument({ ...doc, attestation: { ...att, quotes: [att.quotes[0]!] } }), nonce), rejects('QUOTE_MISSING', /did not include SHA256/));
    await assert.rejects(v.validate(encodeDocument({ ...doc, attestation: { ...att, quotes: [] } }), nonce), rejects('QUOTE_MISSING', /missing quotes/));
  });

  it('rejects truncated and garbled JSON', async () => {
    const nonce = randomBytes(32);
    const raw = Buffer.from(await issuer.issue(USER_DATA, nonce));
    const v = new QemuVtpmValidator(expected);
    for (const bad of [raw.subarray(0, raw.length - 10), Buffer.from('garbage'), Buffer.from(raw.toString().replace('"ak_pub":"', '"ak_pub":"!!'))]) {
      await assert.rejects(v.validate(bad, nonce), rejects('DOCUMENT_MALFORMED'));
    }
    await assert.rejects(v.validate(Buffer.from(raw.toString().replace(/"ak_pub":"[^"]+"/, '"ak_pub":"AAEC"')), nonce), rejects('AK_UNTRUSTED'));
  });

  it('a marked node (PCR 15 non-zero) fails the default expectation PCR15 = 0; a reboot (CMD_INIT) resets PCR 15', async () => {
    const clusterId = Buffer.from('fdb2f1753774fc73773199fc65f3df9c803176ccb88c9851ba73a3de276cddc8', 'hex');
    const only15 = new Measurements([[15, withAllBytes(0, 'Enforce')]]);
    await c.pcrEvent(15, clusterId);
    const nonce = randomBytes(32);
    await assert.rejects(new QemuVtpmValidator(only15).validate(await issuer.issue(USER_DATA, nonce), nonce), rejects('MEASUREMENT_MISMATCH', /PCR\[15\] expected 00000000… got 84f5b698…/));
    await tpm.reboot();
    c = await tpm.client();
    assert.deepEqual((await c.pcrRead([15])).get(15), Buffer.alloc(32));
    assert.deepEqual(Buffer.from(await new QemuVtpmValidator(only15).validate(await issuer.issue(USER_DATA, nonce), nonce)), USER_DATA);
  });
});

describe('qemu-vtpm issuer under concurrency', { skip }, () => {
  it('20 concurrent issues by separate issuers on one swtpm all succeed (transient AKs never exceed the TPM object slots)', async () => {
    const tpm = await startSwtpm();
    try {
      // Separate issuers (one per aTLS connection in practice) sharing one TPM.
      const validator = validatorFromConfigJson('{"measurements":{}}', 'qemu-vtpm');
      const nonces = Array.from({ length: 20 }, () => randomBytes(32));
      const docs = await Promise.all(nonces.map((n) => new QemuVtpmIssuer(() => tpm.client()).issue(USER_DATA, n)));
      for (const [i, doc] of docs.entries()) assert.deepEqual(Buffer.from(await validator.validate(doc, nonces[i]!)), USER_DATA);
    } finally {
      await tpm.stop();
    }
  });
});

describe('qemu-vtpm issuer attestation key reuse', { skip }, () => {
  it('creates the AK once per TPM, recreates it when it was flushed, flushes it after a failure and on release', async () => {
    const tpm = await startSwtpm();
    try {
      const c = await tpm.client();
      let created = 0;
      const create = c.createAttestationKey.bind(c);
      c.createAttestationKey = (...args) => (created++, create(...args));
      let failEventLog = false;
      const issuer = new QemuVtpmIssuer(
        () => tpm.client(),
        async () => {
          if (failEventLog) throw new Error('event log unreadable');
          return Buffer.alloc(0);
        },
      );
      const other = new QemuVtpmIssuer(() => tpm.client());
      const validator = validatorFromConfigJson('{"measurements":{}}', 'qemu-vtpm');
      const transient = async () => (await c.listHandles(TPM_HT.TRANSIENT << 24)).length;
      // [name, action, issuer, issue should succeed, AKs created so far, transient objects after]
      const steps: Array<[string, () => Promise<unknown>, QemuVtpmIssuer, boolean, number, number]> = [
        ['first issue creates the AK', async () => undefined, issuer, true, 1, 1],
        ['second issue reuses it', async () => undefined, issuer, true, 1, 1],
        ['another issuer on the same TPM reuses it too', async () => undefined, other, true, 1, 1],
        ['flushed behind our back: recreated', () => c.flushTransientObjects(), issuer, true, 2, 1],
        ['a failing issue flushes it', async () => (failEventLog = true), issuer, false, 2, 0],
        ['the next issue starts clean', async () => (failEventLog = false), issuer, true, 3, 1],
      ];
      for (const [name, act, iss, succeeds, wantCreated, wantTransient] of steps) {
        await act();
        const nonce = randomBytes(32);
        if (succeeds) assert.deepEqual(Buffer.from(await validator.validate(await iss.issue(USER_DATA, nonce), nonce)), USER_DATA, name);
        else await assert.rejects(iss.issue(USER_DATA, nonce), /event log unreadable/, name);
        assert.equal(created, wantCreated, `${name}: AKs created`);
        assert.equal(await transient(), wantTransient, `${name}: transient objects`);
      }
      assert.equal(await issuer.releaseAttestationKeys(), 1);
      assert.equal(await transient(), 0, 'released');
    } finally {
      await tpm.stop();
    }
  });
});

describe('qemu-vtpm attestation key digest (docs/adr/0008)', { skip }, () => {
  it('is the same for every document of one TPM (also after the AK was flushed and recreated) and differs for another TPM', async () => {
    const [a, b] = await Promise.all([startSwtpm(), startSwtpm()]);
    try {
      const variant = Variant.fromString('qemu-vtpm');
      const digestOf = async (tpm: Swtpm) => attestationKeyDigest(variant, await new QemuVtpmIssuer(() => tpm.client(), async () => Buffer.alloc(0)).issue(USER_DATA, randomBytes(32)));
      const first = await digestOf(a);
      assert.match(first, /^sha256:[0-9a-f]{64}$/);
      assert.equal(await digestOf(a), first, 'another issuer, another nonce');
      await (await a.client()).flushTransientObjects();
      assert.equal(await digestOf(a), first, 'AK recreated from the same template');
      assert.notEqual(await digestOf(b), first, 'another TPM');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
