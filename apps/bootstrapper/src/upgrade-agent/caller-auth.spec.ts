import assert from 'node:assert/strict';
import { sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { createCa, createLeaf, type CertAndKey } from '@asterism/k8s-controlplane';
import { upgradeagent, upgradeSigningPayload } from '@asterism/proto';
import { authenticateCaller, CallerAuthError, NonceBook } from './caller-auth.js';

function signed(nonce: Buffer, who: CertAndKey, edit: Partial<upgradeagent.UpgradeRequest> = {}): upgradeagent.UpgradeRequest {
  const req: upgradeagent.UpgradeRequest = {
    kubernetesVersion: 'v1.35.4',
    components: [{ url: 'http://a/v1.35.4/kubeadm', hash: `sha256:${'a'.repeat(64)}`, installPath: '/run/state/bin/kubeadm', extract: false }],
    step: upgradeagent.Step.STEP_NODE,
    nonce,
    adminCertificate: Buffer.from(who.certPem),
    signature: Buffer.alloc(0),
  };
  req.signature = sign('sha256', upgradeSigningPayload(req), who.keyPem);
  return { ...req, ...edit };
}

const code = (c: string) => (e: unknown) => e instanceof CallerAuthError && e.code === c;

describe('upgrade agent caller authentication (admin certificate of the cluster CA + signature over a single-use nonce)', async () => {
  const ca = await createCa('kubernetes');
  const admin = await createLeaf(ca, { commonName: 'kubernetes-admin', organizations: ['system:masters'], usage: 'client' });

  it('accepts the cluster admin signing a fresh nonce', () => {
    const book = new NonceBook();
    assert.match(authenticateCaller(signed(book.issue(), admin), book, ca.certPem), /O=system:masters/);
  });

  it('a nonce is used once, expires, and must be one the agent issued', () => {
    let now = 0;
    const book = new NonceBook(60_000, 32, () => now);
    const n = book.issue();
    authenticateCaller(signed(n, admin), book, ca.certPem);
    assert.throws(() => authenticateCaller(signed(n, admin), book, ca.certPem), code('CALLER_NOT_AUTHENTICATED'));
    const late = book.issue();
    now = 61_000;
    assert.throws(() => authenticateCaller(signed(late, admin), book, ca.certPem), code('CALLER_NOT_AUTHENTICATED'));
    assert.throws(() => authenticateCaller(signed(Buffer.alloc(32, 1), admin), new NonceBook(), ca.certPem), code('CALLER_NOT_AUTHENTICATED'));
  });

  it('refuses a certificate of another CA, a non-admin certificate, and a request changed after signing', async () => {
    const other = await createCa('kubernetes');
    const stranger = await createLeaf(other, { commonName: 'kubernetes-admin', organizations: ['system:masters'], usage: 'client' });
    const book = new NonceBook();
    assert.throws(() => authenticateCaller(signed(book.issue(), stranger), book, ca.certPem), code('CALLER_NOT_AUTHENTICATED'));
    const kubelet = await createLeaf(ca, { commonName: 'system:node:worker-0', organizations: ['system:nodes'], usage: 'client' });
    assert.throws(() => authenticateCaller(signed(book.issue(), kubelet), book, ca.certPem), code('CALLER_NOT_ADMIN'));
    const n = book.issue();
    const changed = signed(n, admin);
    changed.components[0]!.url = 'http://elsewhere/kubeadm';
    assert.throws(() => authenticateCaller(changed, book, ca.certPem), code('CALLER_NOT_AUTHENTICATED'));
    assert.throws(() => authenticateCaller(signed(book.issue(), admin, { step: upgradeagent.Step.STEP_APPLY }), book, ca.certPem), code('CALLER_NOT_AUTHENTICATED'));
  });
});
