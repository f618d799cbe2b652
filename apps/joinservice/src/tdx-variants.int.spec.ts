/**
 * The joinservice process started with each TDX variant (qemu-tdx, azure-tdx) against a real
 * control plane and keyservice: it loads the TDX collateral cache (offline: ConfigMap only),
 * serves, and refuses a TDX peer whose quote it cannot verify before any key is fetched, logging
 * the DCAP reason.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { defaultAttestationConfig, encodeAttestationConfig, QemuTdxIssuer } from '@asterism/attestation';
import { tdxVector } from '@asterism/attestation/testing';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { call, joinRequest, keyserviceCalls, startHarness, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable();

/** What the joinservice logs when it rejects a qemu-tdx peer presenting the real production quote. */
const cases = [
  // Its collateral (FMSPC 50806f000000) is not in the ConfigMap and the cache is offline.
  { variant: 'qemu-tdx', code: 'ATTESTATION_INVALID', reason: /tcb\/50806f000000 is not cached and the cache is offline/ },
  // An azure-tdx joinservice accepts only azure-tdx documents (vTPM document OID).
  { variant: 'azure-tdx', code: 'NO_COMPATIBLE_DOCUMENT', reason: /compatible attestation documents/ },
] as const;

for (const { variant, code, reason } of cases) {
  describe(`joinservice process with --attestation-variant=${variant}`, { skip }, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(variant, encodeAttestationConfig(defaultAttestationConfig(variant)), ['--collateral-offline']);
    });
    after(async () => h?.stop());

    it('loads the TDX collateral cache, serves, and refuses an unverifiable TDX peer before the keyservice', async () => {
      const logs = h.joinservice.jsonLogs();
      assert.ok(logs.some((l) => l.msg === 'collateral cache loaded' && l.cache === 'tdx-pcs'), 'the TDX collateral cache was loaded');
      const before = await keyserviceCalls(h.keyserviceMetrics);
      // A qemu-tdx peer presenting the real production quote (its collateral is not in the ConfigMap).
      const issuer = new QemuTdxIssuer({ getQuote: async () => tdxVector('quote-v4-spr.dat') });
      const client = new joinApi.APIClient(h.endpoint, atlsChannelCredentials({ issuer }));
      try {
        const { err } = await call((cb) => client.issueJoinTicket(joinRequest(h.dir, 'tdx-node'), cb));
        assert.ok(err && [grpc.status.UNAUTHENTICATED, grpc.status.UNAVAILABLE, grpc.status.PERMISSION_DENIED].includes(err.code), `got ${err?.code} ${err?.details}`);
      } finally {
        client.close();
      }
      assert.equal(await keyserviceCalls(h.keyserviceMetrics), before, 'no GetDataKey call was made');
      const rejected = h.joinservice.jsonLogs().find((l) => l.msg === 'rejected aTLS peer');
      assert.equal(rejected?.code, code);
      assert.match(String(rejected?.reason), reason);
    });
  });
}
