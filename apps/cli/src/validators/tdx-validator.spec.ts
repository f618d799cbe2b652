/**
 * The TDX validators the CLI builds, with the REAL Intel quote vector and its June 2023 PCS
 * collateral served by a local stand-in PCS, at a time inside the collateral's validity: the
 * quote and collateral authenticate against the embedded Intel root, so the validator reaches
 * the TCB evaluation (this platform is below the lowest level: TCB_LEVEL_NOT_FOUND). Proves
 * the collateral path of init/verify/recover (azure-tdx, which checks its HCL binding after DCAP;
 * qemu-tdx checks REPORT_DATA first, so the real quote stops there), the collateral directory
 * and the offline mode.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  AttestationError,
  defaultAttestationConfig,
  encodeAzureTdxInstanceInfo,
  encodeDocument,
  encodeTdxDocument,
  Measurements,
  type AttestationConfig,
} from '@asterism/attestation';
import { tdxVector, VECTOR_TIME, vectorCollateral } from '@asterism/attestation/testing';
import { startPcsServer, type PcsServer } from '../testing/pcs-server.fixture.js';
import { buildCliValidator, type CliValidatorOptions } from './cli-validator.js';

const quote = tdxVector('quote-v4-spr.dat');
const nonce = Buffer.alloc(32, 5);
const userData = Buffer.from('VerifyService');
const DOCUMENTS: Array<[variant: string, config: () => AttestationConfig, document: Buffer]> = [
  ['qemu-tdx', () => ({ variant: 'qemu-tdx', measurements: Measurements.of([]) }) as AttestationConfig, encodeTdxDocument({ rawQuote: quote, userData })],
  [
    'azure-tdx',
    () => defaultAttestationConfig('azure-tdx'),
    encodeDocument({ attestation: null, instanceInfo: encodeAzureTdxInstanceInfo({ attestationReport: quote, runtimeData: Buffer.from('{}') }), userData }),
  ],
];

const code = (want: string) => (err: unknown) => {
  assert.ok(err instanceof AttestationError || (err as { code?: string }).code !== undefined, String(err));
  assert.equal((err as { code: string }).code, want, (err as Error).message);
  return true;
};

describe('CLI TDX validators: Intel PCS collateral, --collateral-dir, --collateral-offline (real quote vector)', () => {
  let pcs: PcsServer;
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'asterism-cli-pcs-'));
    dirs.push(d);
    return d;
  };
  before(async () => {
    pcs = await startPcsServer(vectorCollateral());
  });
  after(async () => {
    await pcs?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('qemu-tdx: the real quote does not bind this nonce: NONCE_MISMATCH before any PCS request (its collateral path is in tdx-endpoint.spec.ts, on re-signed quotes)', async () => {
    const before = pcs.requests.length;
    const v = await buildCliValidator(DOCUMENTS[0]![1](), { pcs: pcs.pcs, clock: () => VECTOR_TIME, collateralDir: tempDir() });
    await assert.rejects(v.validator.validate(DOCUMENTS[0]![2], nonce), code('NONCE_MISMATCH'));
    await v.close();
    assert.equal(pcs.requests.length, before);
  });

  // azure-tdx checks the HCL binding after DCAP, so the real quote reaches the collateral and the TCB evaluation.
  for (const [variant, config, document] of DOCUMENTS.slice(1)) {
    it(`${variant}: collateral fetched from PCS once and kept in the directory; an offline run then needs no PCS`, async () => {
      const dir = tempDir();
      const options: CliValidatorOptions = { pcs: pcs.pcs, clock: () => VECTOR_TIME, collateralDir: dir };
      const before = pcs.requests.length;
      const online = await buildCliValidator(config(), options);
      await assert.rejects(online.validator.validate(document, nonce), code('TCB_LEVEL_NOT_FOUND'));
      await online.close();
      assert.equal(online.tdx.last?.ok, false);
      assert.deepEqual(
        pcs.requests.slice(before).map((r) => r.split('?')[0]).sort(),
        ['/IntelSGXRootCA.der', '/sgx/certification/v4/pckcrl', '/tdx/certification/v4/qe/identity', '/tdx/certification/v4/tcb'],
      );
      assert.deepEqual(readdirSync(join(dir, 'tdx-pcs')).sort(), ['pck-crl%2Fplatform.json', 'qe-identity.json', 'root-crl.json', 'tcb%2F50806f000000.json']);

      const offline = await buildCliValidator(config(), { ...options, collateralOffline: true });
      await assert.rejects(offline.validator.validate(document, nonce), code('TCB_LEVEL_NOT_FOUND'));
      await offline.close();
      assert.equal(pcs.requests.length, before + 4, 'the offline run asked PCS nothing');
    });
  }

  it('offline with an empty directory: COLLATERAL_UNAVAILABLE naming the offline cache, PCS not asked', async () => {
    const before = pcs.requests.length;
    const v = await buildCliValidator(DOCUMENTS[1]![1](), { pcs: pcs.pcs, clock: () => VECTOR_TIME, collateralDir: tempDir(), collateralOffline: true });
    await assert.rejects(v.validator.validate(DOCUMENTS[1]![2], nonce), (err: Error) => code('COLLATERAL_UNAVAILABLE')(err) && /is not cached and the cache is offline/.test(err.message));
    await v.close();
    assert.equal(pcs.requests.length, before);
  });

  it('a stored record that was tampered with is not trusted: dropped (offline: unavailable), fetched again online', async () => {
    const dir = tempDir();
    const options: CliValidatorOptions = { pcs: pcs.pcs, clock: () => VECTOR_TIME, collateralDir: dir };
    const first = await buildCliValidator(DOCUMENTS[1]![1](), options);
    await assert.rejects(first.validator.validate(DOCUMENTS[1]![2], nonce), code('TCB_LEVEL_NOT_FOUND'));
    await first.close();
    const file = join(dir, 'tdx-pcs', 'qe-identity.json');
    const record = JSON.parse(readFileSync(file, 'utf8')) as { payload: string };
    const payload = JSON.parse(Buffer.from(record.payload, 'base64').toString()) as { body: string };
    const body = Buffer.from(payload.body, 'base64').toString();
    const tampered = body.replace('"isvprodid":2', '"isvprodid":3');
    assert.notEqual(tampered, body);
    payload.body = Buffer.from(tampered).toString('base64');
    writeFileSync(file, JSON.stringify({ ...record, payload: Buffer.from(JSON.stringify(payload)).toString('base64') }));

    const offline = await buildCliValidator(DOCUMENTS[1]![1](), { ...options, collateralOffline: true });
    await assert.rejects(offline.validator.validate(DOCUMENTS[1]![2], nonce), code('COLLATERAL_UNAVAILABLE'));
    await offline.close();
    const before = pcs.requests.length;
    const online = await buildCliValidator(DOCUMENTS[1]![1](), options);
    await assert.rejects(online.validator.validate(DOCUMENTS[1]![2], nonce), code('TCB_LEVEL_NOT_FOUND'));
    await online.close();
    assert.deepEqual(pcs.requests.slice(before), ['/tdx/certification/v4/qe/identity']);
  });
});
