import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { AsterismError } from '@asterism/errors';
import { runTarget } from '../gate.js';
import { Prng } from '../prng.js';
import { vector } from '../vectors.js';
import { derElements, findDerCertificates, mutateDer } from './der.js';
import { mutate } from './index.js';
import { mutatePem } from './pem.js';

describe('mutation engine', () => {
  it('is deterministic: the same seed gives the same inputs', () => {
    const seed = vector('snp/vcek.cert');
    const run = (s: number) => {
      const rng = new Prng(s);
      return Array.from({ length: 50 }, () => mutate(seed, rng).toString('hex'));
    };
    assert.deepEqual(run(7), run(7));
    assert.notDeepEqual(run(7), run(8));
  });

  it('walks into a real certificate down to its public key (the SPKI BIT STRING and the extension values)', () => {
    const der = vector('snp/vcek.cert');
    const els = derElements(der);
    assert.ok(els.length > 40, `${els.length} elements`);
    assert.ok(els.some((e) => e.tag === 0x03 && der[e.contentAt + 1] === 0x04 && e.end - e.contentAt === 98), 'the P-384 point');
    assert.deepEqual(findDerCertificates(Buffer.concat([Buffer.alloc(7), der, Buffer.alloc(3)])), [{ start: 7, end: 7 + der.length }]);
  });

  it('moves EC points off their curve: some mutants parse as certificates whose key OpenSSL cannot decode', () => {
    const der = vector('snp/vcek.cert');
    const rng = new Prng(1);
    let offCurve = 0;
    for (let i = 0; i < 3000 && offCurve === 0; i++) {
      const m = mutateDer(der, rng);
      assert.equal(m.length, der.length, 'same size');
      let x: X509Certificate;
      try {
        x = new X509Certificate(m);
      } catch {
        continue;
      }
      try {
        void x.publicKey;
      } catch {
        offCurve++;
      }
    }
    assert.ok(offCurve > 0, 'a certificate with an undecodable key was generated');
  });

  it('mutates a certificate inside PEM text in place: same length, same line breaks, other DER', () => {
    const pem = vector('snp/certchain.pem');
    const rng = new Prng(3);
    const m = mutatePem(pem, rng)!;
    assert.equal(m.length, pem.length);
    assert.deepEqual([...m.toString('latin1').matchAll(/\n/g)].map((x) => x.index), [...pem.toString('latin1').matchAll(/\n/g)].map((x) => x.index));
    assert.notDeepEqual(m, pem);
  });

  it('runTarget counts accepted, typed and foreign outcomes and keeps the foreign input in hex', async () => {
    const target = {
      name: 'probe',
      parser: 'a probe',
      seeds: [{ name: 'bytes', bytes: Buffer.from('00010203', 'hex') }],
      runs: 200,
      run: (b: Buffer) => {
        if (b.length === 0 || b[0] === 0xff) throw new TypeError('boom');
        if (b[0] !== 0) throw new AsterismError('PROBE', 'refused');
      },
    };
    const { report, findings } = await runTarget(target);
    assert.equal(report.inputs, 201);
    assert.equal(report.accepted + (report.refused.PROBE ?? 0) + report.foreign, 201);
    assert.ok(report.accepted >= 1, 'the seed itself is accepted');
    assert.ok(report.foreign > 0 && findings.length > 0 && findings.length <= 5);
    assert.match(findings[0]!.error, /^TypeError: boom/);
    assert.ok(findings[0]!.inputHex.length === 0 || findings[0]!.inputHex.startsWith('ff'));
  });
});
