/**
 * The joinservice process started with each TDX variant (qemu-tdx, azure-tdx) against a real
 * control plane and keyservice: it loads the TDX collateral cache, serves, and refuses a TDX peer
 * whose quote it cannot verify before any key is fetched, logging the reason. Online, it asks the
 * PCS named by --intel-pcs-url / --intel-root-crl-url (a local replay server here) and never uses
 * collateral past its next update; --tdx-accepted-tcb-statuses reaches the validators' policy.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { defaultAttestationConfig, encodeAttestationConfig, QemuTdxIssuer } from '@asterism/attestation';
import { tdxVector, VECTOR_OFFSETS, vectorCollateral } from '@asterism/attestation/testing';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { call, joinRequest, keyserviceCalls, startHarness, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable();

/**
 * A qemu-tdx peer presenting the real production quote with its REPORT_DATA rewritten to bind the
 * handshake (so it passes the binding check and reaches DCAP; the signature no longer matches,
 * but the collateral lookup comes first).
 */
const boundRealQuote = new QemuTdxIssuer({
  getQuote: async (reportData) => {
    const quote = Buffer.from(tdxVector('quote-v4-spr.dat'));
    reportData.copy(quote, VECTOR_OFFSETS.reportData);
    return quote;
  },
});

/** A local stand-in for Intel PCS replaying the June 2023 collateral; `hits` records each path. */
function pcsReplay(hits: string[]): Server {
  const v = vectorCollateral();
  const answers: Record<string, [Buffer | string, string?, string?]> = {
    '/tdx/certification/v4/tcb': [v.tcbInfo, 'TCB-Info-Issuer-Chain', v.tcbInfoIssuerChain],
    '/tdx/certification/v4/qe/identity': [v.qeIdentity, 'SGX-Enclave-Identity-Issuer-Chain', v.qeIdentityIssuerChain],
    '/sgx/certification/v4/pckcrl': [Buffer.from(v.pckCrl), 'SGX-PCK-CRL-Issuer-Chain', v.pckCrlIssuerChain],
    '/root.der': [Buffer.from(v.rootCrl)],
  };
  return createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push(path);
    const answer = answers[path];
    if (!answer) return void res.writeHead(404).end();
    const [body, header, chain] = answer;
    if (header && chain) res.setHeader(header, encodeURIComponent(chain));
    res.end(body);
  });
}

/** Joins with `issuer` and returns the joinservice's rejection log line; no key may be fetched. */
async function rejectedJoin(h: Harness, issuer: QemuTdxIssuer): Promise<Record<string, unknown> | undefined> {
  const before = await keyserviceCalls(h.keyserviceMetrics);
  const client = new joinApi.APIClient(h.endpoint, atlsChannelCredentials({ issuer }));
  try {
    const { err } = await call((cb) => client.issueJoinTicket(joinRequest(h.dir, 'tdx-node'), cb));
    assert.ok(err && [grpc.status.UNAUTHENTICATED, grpc.status.UNAVAILABLE, grpc.status.PERMISSION_DENIED].includes(err.code), `got ${err?.code} ${err?.details}`);
  } finally {
    client.close();
  }
  assert.equal(await keyserviceCalls(h.keyserviceMetrics), before, 'no GetDataKey call was made');
  return h.joinservice.jsonLogs().find((l) => l.msg === 'rejected aTLS peer');
}

/** Offline: what the joinservice logs when it rejects a TDX peer presenting the real production quote. */
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
      const rejected = await rejectedJoin(h, boundRealQuote);
      assert.equal(rejected?.code, code);
      assert.match(String(rejected?.reason), reason);
    });
  });
}

describe('joinservice process with qemu-tdx online: --intel-pcs-url, --intel-root-crl-url, --tdx-accepted-tcb-statuses', { skip }, () => {
  let h: Harness;
  const hits: string[] = [];
  const pcs = pcsReplay(hits);
  before(async () => {
    await new Promise<void>((r) => pcs.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(pcs.address() as AddressInfo).port}`;
    h = await startHarness('qemu-tdx', encodeAttestationConfig(defaultAttestationConfig('qemu-tdx')), [
      `--intel-pcs-url=${url}/`,
      `--intel-root-crl-url=${url}/root.der`,
      '--tdx-accepted-tcb-statuses=uptodate,SWHardeningNeeded',
    ]);
  });
  after(async () => {
    await h?.stop();
    pcs.close();
  });

  it('fetches the collateral from the replay server and refuses it as expired (never used); the policy is the flag', async () => {
    const policy = h.joinservice.jsonLogs().find((l) => l.msg === 'TDX TCB status policy');
    assert.deepEqual(policy?.accepted, ['UpToDate', 'SWHardeningNeeded']);
    const rejected = await rejectedJoin(h, boundRealQuote);
    assert.equal(rejected?.code, 'ATTESTATION_INVALID');
    // At today's clock the June 2023 records are past their next update (root CRL: 2024-04-02), and
    // the TCB signing certificate in their issuer chains expired in 2025: whichever lookup fails
    // first, nothing expired is used.
    assert.match(String(rejected?.reason), /from the remote service (expired at 202[34]-\d\d-\d\dT|does not verify: .* is expired at .* \(valid .* to 2025-)/);
    // The four lookups run in parallel; the first refusal ends the handshake, the others still reach the server.
    for (let i = 0; i < 100 && new Set(hits).size < 4; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual([...new Set(hits)].sort(), ['/root.der', '/sgx/certification/v4/pckcrl', '/tdx/certification/v4/qe/identity', '/tdx/certification/v4/tcb']);
  });
});
