import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { AttestationError } from '../errors.js';
import { makeSyntheticPki, resignedCollateral, resignedQuote, v5SignedBytes, type CollateralEdits, type SyntheticPki } from './synthetic-pki.fixture.js';
import { DcapVerifier } from './verifier.js';
import { errorCode } from './vectors.fixture.js';

function pkiOrSkip(): SyntheticPki | string {
  try {
    return makeSyntheticPki();
  } catch {
    return missingComponent('openssl', 'apt-get install openssl') || 'openssl failed';
  }
}

const pki = pkiOrSkip();
const skip = typeof pki === 'string' ? pki : false;

describe('DcapVerifier end to end with a stand-in Intel PKI (re-signed real quote and collateral)', { skip }, () => {
  const p = pki as SyntheticPki;
  const at = new Date();
  const quote = typeof pki === 'string' ? Buffer.alloc(0) : resignedQuote(p);
  const verifier = () => new DcapVerifier({ trustedRoot: p.root.pem });

  it('verifies with status UpToDate when the TCB info has a level the platform meets', () => {
    const r = verifier().verify(quote, resignedCollateral(p, at), at);
    assert.deepEqual([r.tcb.status, r.tcb.platformStatus, r.tcb.qeStatus, r.fmspc, r.pckIssuer], ['UpToDate', 'UpToDate', 'UpToDate', '50806f000000', 'Test SGX PCK Platform CA']);
  });

  it('a signed v5 quote with a TDX 1.0 body verifies like v4 (same body, UpToDate); so does a TD 1.5 body (zero TEE_TCB_SVN2 and MRSERVICETD)', () => {
    const v5 = verifier().verify(resignedQuote(p, v5SignedBytes(2)), resignedCollateral(p, at), at);
    assert.deepEqual([v5.quote.header.version, v5.quote.bodyType, v5.tcb.status], [5, 2, 'UpToDate']);
    assert.deepEqual(v5.quote.body, verifier().verify(quote, resignedCollateral(p, at), at).quote.body);
    const td15 = verifier().verify(resignedQuote(p, v5SignedBytes(3)), resignedCollateral(p, at), at);
    assert.deepEqual([td15.quote.bodyType, td15.tcb.status, td15.tcb.relaunchAdvised, td15.quote.body.mrServiceTd?.toString('hex')], [3, 'UpToDate', false, '00'.repeat(48)]);
  });

  const pckSerial = () => p.pck.cert.serialNumber;
  const cases: { name: string; edits: CollateralEdits; want: string }[] = [
    { name: 'the PCK CRL lists the PCK', edits: { pckCrlSerials: ['01', pckSerial()] }, want: 'CERT_REVOKED' },
    { name: 'the root CRL lists the Platform CA', edits: { rootCrlSerials: [p.platformCa?.cert.serialNumber ?? '02'] }, want: 'CERT_REVOKED' },
    { name: 'the only level the platform meets is OutOfDate', edits: { tcbInfo: (t) => ((t.tcbLevels as { tcbStatus: string }[])[0]!.tcbStatus = 'OutOfDate') }, want: 'TCB_STATUS_REJECTED' },
    { name: 'the TCB info is for another FMSPC', edits: { tcbInfo: (t) => (t.fmspc = '00906ed50000') }, want: 'COLLATERAL_MISMATCH' },
    { name: 'the QE identity names another QE signer', edits: { qeIdentity: (q) => (q.mrsigner = '00'.repeat(32)) }, want: 'QE_IDENTITY_MISMATCH' },
    { name: 'the QE is OutOfDate (converges to OutOfDate)', edits: { qeIdentity: (q) => ((q.tcbLevels as { tcbStatus: string }[])[0]!.tcbStatus = 'OutOfDate') }, want: 'TCB_STATUS_REJECTED' },
  ];
  for (const c of cases) {
    it(`refuses: ${c.name} -> ${c.want}`, () => assert.equal(errorCode(() => verifier().verify(quote, resignedCollateral(p, at, c.edits), at)), c.want));
  }

  it('the revocation error names the PCK serial', () => {
    assert.throws(
      () => verifier().verify(quote, resignedCollateral(p, at, { pckCrlSerials: [pckSerial()] }), at),
      (err: AttestationError) => err.code === 'CERT_REVOKED' && err.details.serial === pckSerial().replace(/^0+/, '') && err.details.collateral === 'PCK CRL',
    );
  });

  it('the Intel root refuses the stand-in chain', () => assert.equal(errorCode(() => new DcapVerifier().verify(quote, resignedCollateral(p, at), at)), 'CERT_CHAIN_INVALID'));
});
