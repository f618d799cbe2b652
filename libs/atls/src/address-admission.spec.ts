import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressAdmission, peerAddress, type AdmissionLimits } from './address-admission.js';

const small: Partial<AdmissionLimits> = {
  maxConnections: 10,
  reservedConnections: 2,
  maxConnectionsPerAddress: 4,
  maxPendingHandshakes: 6,
  maxPendingHandshakesPerAddress: 2,
  handshakesPerSecondPerAddress: 1000,
  handshakeBurstPerAddress: 1000,
};

/** Admits `n` connections from `address`, finishing issuance for each; returns the refusals. */
function fill(a: AddressAdmission, address: string, n: number) {
  const out: (string | undefined)[] = [];
  for (let i = 0; i < n; i++) {
    const r = a.admit(address);
    if (!r) a.issued(address);
    out.push(r);
  }
  return out;
}

describe('AddressAdmission', () => {
  it('caps the connections of one address; others are unaffected', () => {
    const a = new AddressAdmission(small);
    assert.deepEqual(fill(a, '10.0.0.1', 5), [undefined, undefined, undefined, undefined, 'ADDRESS_CONNECTION_LIMIT']);
    assert.equal(a.admit('10.0.0.2'), undefined);
    assert.deepEqual(a.refusals, { ADDRESS_CONNECTION_LIMIT: 1 });
    assert.equal(a.admitted, 5, 'every attempt is either admitted or refused with a reason');
  });

  it('keeps the last slots for addresses that hold nothing yet', () => {
    const a = new AddressAdmission(small);
    fill(a, '10.0.0.1', 4);
    fill(a, '10.0.0.2', 4); // 8 open = max 10 - reserve 2
    assert.equal(a.admit('10.0.0.1'), 'ADDRESS_CONNECTION_LIMIT');
    assert.deepEqual(fill(a, '10.0.0.3', 2), [undefined, 'RESERVED_CAPACITY']);
    assert.equal(a.admit('10.0.0.4'), undefined, 'a newcomer still gets a reserved slot');
    assert.equal(a.admit('10.0.0.5'), 'CONNECTION_LIMIT');
  });

  it('bounds concurrent issuances per address and overall', () => {
    const a = new AddressAdmission(small);
    assert.equal(a.admit('10.0.0.1'), undefined);
    assert.equal(a.admit('10.0.0.1'), undefined);
    assert.equal(a.admit('10.0.0.1'), 'ADDRESS_PENDING_LIMIT');
    a.issued('10.0.0.1');
    assert.equal(a.admit('10.0.0.1'), undefined);
    for (const ip of ['10.0.0.2', '10.0.0.2', '10.0.0.3', '10.0.0.3']) a.admit(ip);
    assert.equal(a.admit('10.0.0.4'), 'PENDING_LIMIT');
  });

  it('rate limits new handshakes per address', () => {
    const a = new AddressAdmission({ ...small, handshakesPerSecondPerAddress: 0.001, handshakeBurstPerAddress: 2 });
    const r1 = a.admit('10.0.0.1');
    a.issued('10.0.0.1');
    a.closed('10.0.0.1');
    const r2 = a.admit('10.0.0.1');
    a.issued('10.0.0.1');
    a.closed('10.0.0.1');
    assert.deepEqual([r1, r2, a.admit('10.0.0.1')], [undefined, undefined, 'ADDRESS_HANDSHAKE_RATE']);
  });

  it('frees slots when connections close', () => {
    const a = new AddressAdmission(small);
    fill(a, '10.0.0.1', 4);
    for (let i = 0; i < 4; i++) a.closed('10.0.0.1');
    assert.equal(a.open, 0);
    assert.deepEqual(fill(a, '10.0.0.1', 4), [undefined, undefined, undefined, undefined]);
  });

  for (const [raw, want] of [
    ['::ffff:127.0.0.2', '127.0.0.2'],
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '::1'],
    [undefined, 'unknown'],
  ] as const) {
    it(`peerAddress(${String(raw)}) = ${want}`, () => assert.equal(peerAddress(raw), want));
  }
});
