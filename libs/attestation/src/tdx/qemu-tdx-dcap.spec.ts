/**
 * The qemu-tdx validator and the azure-tdx verifier factory with the real DcapVerifier, end to end
 * on the real quote re-signed under a stand-in Intel PKI (openssl): the operator's TCB status
 * policy decides OutOfDate platforms, and a REPORT_DATA tamper is told apart from other body and
 * signature tampers because the binding is checked before DCAP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { dcapVerifierFor } from '../variants/azure-tdx.js';
import { defaultAttestationConfig } from '../attestation-config.js';
import type { AzureTdxConfig } from '../config/types.js';
import { AttestationError } from '../errors.js';
import { makeExtraData } from '../extra-data.js';
import type { DcapCollateral } from './collateral.js';
import { encodeTdxDocument } from './document.js';
import type { TdxPlatform } from './pcs-collateral.js';
import { QemuTdxValidator } from '../variants/qemu-tdx.js';
import { parseTdxQuote } from './quote.js';
import { makeSyntheticPki, resignedCollateral, resignedQuote, type CollateralEdits, type SyntheticPki } from './synthetic-pki.fixture.js';
import { DcapVerifier } from './verifier.js';
import { errorCode, tdxVector, VECTOR_OFFSETS } from './vectors.fixture.js';

function pkiOrSkip(): SyntheticPki | string {
  try {
    return makeSyntheticPki();
  } catch {
    return missingComponent('openssl', 'apt-get install openssl') || 'openssl failed';
  }
}
const pki = pkiOrSkip();
const skip = typeof pki === 'string' ? pki : false;

const outOfDate: CollateralEdits = { tcbInfo: (t) => ((t.tcbLevels as { tcbStatus: string }[])[0]!.tcbStatus = 'OutOfDate') };
const flip = (buf: Buffer, offset: number) => Buffer.from(buf.map((b, i) => (i === offset ? b ^ 0x01 : b)));

describe('qemu-tdx validator with the real DcapVerifier (stand-in Intel PKI)', { skip }, () => {
  const p = pki as SyntheticPki;
  const at = new Date();
  const userData = Buffer.from('tls key digest');
  const nonce = Buffer.alloc(32, 7);
  /** The real quote's header + body with REPORT_DATA = SHA256(userData || nonce) ‖ 0^32, re-signed. */
  const boundQuote = () => {
    const signed = Buffer.from(parseTdxQuote(tdxVector('quote-v4-spr.dat')).signedBytes);
    Buffer.concat([makeExtraData(userData, nonce), Buffer.alloc(32)]).copy(signed, VECTOR_OFFSETS.reportData);
    return resignedQuote(p, signed);
  };
  const quote = typeof pki === 'string' ? Buffer.alloc(0) : boundQuote();
  const source = (edits: CollateralEdits = {}) => {
    const asked: TdxPlatform[] = [];
    return { asked, collateral: async (platform: TdxPlatform): Promise<DcapCollateral> => (asked.push(platform), resignedCollateral(p, at, edits)) };
  };
  const validator = (src: ReturnType<typeof source>, acceptedTcbStatuses?: ('UpToDate' | 'OutOfDate')[]) =>
    new QemuTdxValidator({ measurements: new Map(), collateral: src, clock: () => at, ...(acceptedTcbStatuses ? { acceptedTcbStatuses } : {}) });
  // The validator's default verifier trusts Intel's root; these tests inject one with the stand-in root and the policy.
  const withRoot = (src: ReturnType<typeof source>, acceptedStatuses?: ('UpToDate' | 'OutOfDate')[]) =>
    new QemuTdxValidator({ measurements: new Map(), collateral: src, clock: () => at, verifier: new DcapVerifier({ trustedRoot: p.root.pem, ...(acceptedStatuses ? { acceptedStatuses } : {}) }) });
  const validate = (v: QemuTdxValidator, q = quote) => v.validate(encodeTdxDocument({ rawQuote: q, userData }), nonce);

  it('a bound, UpToDate quote is accepted and returns the user data', async () => {
    assert.deepEqual(Buffer.from(await validate(withRoot(source()))), userData);
  });

  it('TCB status policy: an OutOfDate platform is refused by default and accepted when the operator lists OutOfDate', async () => {
    await assert.rejects(validate(withRoot(source(outOfDate))), (e: unknown) => e instanceof AttestationError && e.code === 'TCB_STATUS_REJECTED' && e.details.status === 'OutOfDate');
    assert.deepEqual(Buffer.from(await validate(withRoot(source(outOfDate), ['UpToDate', 'OutOfDate']))), userData);
  });

  it('the acceptedTcbStatuses option reaches the default verifier (which trusts only Intel: the stand-in chain is refused first)', async () => {
    await assert.rejects(validate(validator(source(), ['UpToDate'])), (e: unknown) => e instanceof AttestationError && e.code === 'CERT_CHAIN_INVALID');
  });

  const tampers: Array<[string, () => Buffer, string, boolean]> = [
    ['REPORT_DATA byte (checked before DCAP: no collateral lookup)', () => flip(quote, VECTOR_OFFSETS.reportData + 3), 'NONCE_MISMATCH', false],
    ['MRTD byte (covered only by the quote signature)', () => flip(quote, 48 + 136), 'QUOTE_SIGNATURE_INVALID', true],
    ['quote signature byte', () => flip(quote, VECTOR_OFFSETS.signature + 5), 'QUOTE_SIGNATURE_INVALID', true],
  ];
  for (const [name, tampered, code, asksCollateral] of tampers) {
    it(`tamper: ${name} -> ${code}`, async () => {
      const src = source();
      await assert.rejects(validate(withRoot(src), tampered()), (e: unknown) => e instanceof AttestationError && e.code === code);
      assert.equal(src.asked.length, asksCollateral ? 1 : 0);
    });
  }
});

describe('azure-tdx dcapVerifierFor: config root and operator status policy', { skip }, () => {
  const p = pki as SyntheticPki;
  const at = new Date();
  const quote = typeof pki === 'string' ? Buffer.alloc(0) : resignedQuote(p);
  const config = (): AzureTdxConfig => ({ ...(defaultAttestationConfig('azure-tdx') as AzureTdxConfig), intelRootKey: p.root.cert.raw });

  it('OutOfDate: refused by default, accepted with the operator policy; the config root is the trust anchor', () => {
    assert.equal(errorCode(() => dcapVerifierFor(config()).verify(quote, resignedCollateral(p, at, outOfDate), at)), 'TCB_STATUS_REJECTED');
    assert.equal(dcapVerifierFor(config(), { acceptedTcbStatuses: ['UpToDate', 'OutOfDate'] }).verify(quote, resignedCollateral(p, at, outOfDate), at).tcb.status, 'OutOfDate');
    assert.equal(errorCode(() => dcapVerifierFor({ ...config(), intelRootKey: null }).verify(quote, resignedCollateral(p, at), at)), 'CERT_CHAIN_INVALID');
  });
});
