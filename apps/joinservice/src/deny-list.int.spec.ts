/**
 * The attestation deny list (docs/adr/0037) in the REAL joinservice process: a real
 * kube-apiserver holds the deny list ConfigMap the monitor writes, a real keyservice process, and
 * clients attesting over aTLS (dummy, and qemu-vtpm on swtpm for the attestation-key entry).
 * A deny-listed disk or key is refused with PERMISSION_DENIED, reason QUARANTINED and the entry's
 * reason, before any key is fetched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { attestationKeyDigest, QemuVtpmIssuer, Variant } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { DenyListStore } from '@asterism/node-attestation';
import { join as joinApi } from '@asterism/proto';
import { REASON_METADATA } from '@asterism/service-runtime';
import { missingComponent } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import * as grpc from '@grpc/grpc-js';
import { call, joinRequest, keyserviceCalls, startHarness, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable() || (swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT));
const DENIED = 'dddddddd-0000-4000-8000-00000000000d';
const FREE = 'eeeeeeee-0000-4000-8000-00000000000e';

describe('joinservice refuses quarantined disks and attestation keys (real process, real apiserver)', { skip }, () => {
  let h: Harness;
  let tpm: Swtpm;
  const clients: joinApi.APIClient[] = [];
  const client = (issuer: QemuVtpmIssuer) => {
    const c = new joinApi.APIClient(h.endpoint, atlsChannelCredentials({ issuer }));
    clients.push(c);
    return c;
  };
  const rejoin = (c: joinApi.APIClient, diskUuid: string) => call<joinApi.IssueRejoinTicketResponse>((cb) => c.issueRejoinTicket({ diskUuid }, cb));

  before(async () => {
    tpm = await startSwtpm();
    // Empty measurements: the qemu-vtpm client attests, only the deny list decides.
    h = await startHarness('qemu-vtpm', '{"measurements":{}}', ['--identity-binding=off']);
  });
  after(async () => {
    for (const c of clients) c.close();
    await h?.stop();
    await tpm?.stop();
  });

  it('a rejoin for a deny-listed disk is PERMISSION_DENIED / QUARANTINED with the reason, and no key is fetched', async () => {
    await new DenyListStore(h.cp.admin.core).add([{ kind: 'disk', id: DENIED, node: 'worker-1', reason: 'MeasurementMismatch (PCR[9]): PCR[9] differs', since: new Date().toISOString() }]);
    const c = client(new QemuVtpmIssuer(() => tpm.client()));
    const keysBefore = await keyserviceCalls(h.keyserviceMetrics);
    const { err } = await rejoin(c, DENIED.toUpperCase());
    assert.equal(err?.code, grpc.status.PERMISSION_DENIED);
    assert.equal(err?.metadata.get(REASON_METADATA)[0], 'QUARANTINED');
    assert.equal(err?.details, `disk ${DENIED} is quarantined (node worker-1): MeasurementMismatch (PCR[9]): PCR[9] differs`);
    const join = await call<joinApi.IssueJoinTicketResponse>((cb) => c.issueJoinTicket(joinRequest(h.dir, 'worker-1', { diskUuid: DENIED }), cb));
    assert.equal(join.err?.code, grpc.status.PERMISSION_DENIED);
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), keysBefore, 'refused before any key');
    const ok = await rejoin(c, FREE);
    assert.equal(ok.err, null, ok.err?.message);
  });

  it('a deny-listed attestation key is refused whatever disk it names', async () => {
    const issuer = new QemuVtpmIssuer(() => tpm.client());
    const ak = attestationKeyDigest(Variant.fromString('qemu-vtpm'), await issuer.issue(Buffer.alloc(32), Buffer.alloc(32)));
    await new DenyListStore(h.cp.admin.core).add([{ kind: 'ak', id: ak, node: 'worker-2', reason: 'ClusterMarkMismatch (PCR[15])', since: new Date().toISOString() }]);
    // The joinservice re-reads the list at most every 2 s.
    await new Promise((r) => setTimeout(r, 2200));
    const { err } = await rejoin(client(issuer), FREE);
    assert.equal(err?.code, grpc.status.PERMISSION_DENIED);
    assert.match(err!.details, new RegExp(`^attestation key ${ak} is quarantined \\(node worker-2\\)`));
  });
});
