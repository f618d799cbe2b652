import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AzureTdxIssuer, QemuTdxIssuer, QemuVtpmIssuer, Variant } from '@asterism/attestation';
import { TDX_MEASUREMENTS_DIR } from '@asterism/nodelock';
import { nodeInterfaces, nodePlatformFor, type NodePlatformConfig } from './platform.js';

const config = (variant: string, root = '/'): NodePlatformConfig => ({ variant: Variant.fromString(variant), stateRoot: root, tpm: 'unix:/nonexistent', csp: 'QEMU', metadata: 'http://10.42.0.1:8080' });

describe('nodePlatformFor', () => {
  const root = mkdtempSync(join(tmpdir(), 'platform-spec-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  const cases = [
    { variant: 'qemu-vtpm', issuer: QemuVtpmIssuer },
    { variant: 'qemu-tdx', issuer: QemuTdxIssuer },
    { variant: 'azure-tdx', issuer: AzureTdxIssuer },
  ];
  for (const c of cases) it(`${c.variant} issues with ${c.issuer.name}`, () => assert.ok(nodePlatformFor(config(c.variant), () => undefined).issuer instanceof c.issuer));

  it('every variant of the reference gets a platform whose issuer attests that variant', () => {
    for (const name of Variant.all().map(String)) assert.equal(nodePlatformFor(config(name), () => undefined).issuer.variant.name, name, name);
  });

  it('qemu-tdx marks RTMR2 with SHA384(clusterID) under --state-root and reads it back as the mark', async () => {
    const dir = join(root, TDX_MEASUREMENTS_DIR);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'rtmr2:sha384'), Buffer.alloc(48));
    const platform = nodePlatformFor(config('qemu-tdx', root), () => undefined);
    assert.deepEqual(await platform.mark.readMark(), Buffer.alloc(48));
    await platform.marker.markNodeAsBootstrapped(Buffer.from('cluster-id'));
    // A plain file keeps the last write (the kernel would extend): the marker wrote the digest.
    assert.deepEqual(readFileSync(join(dir, 'rtmr2:sha384')), createHash('sha384').update('cluster-id').digest());
    await platform.close();
  });
});

describe('nodeInterfaces (where the SNP and azure-tdx issuers look)', () => {
  const cases: Array<[string, Pick<NodePlatformConfig, 'stateRoot' | 'csp' | 'metadata'>, { stateRoot: string; metadataUrl?: string }]> = [
    ['QEMU: the qemu metadata API is not an instance metadata service', { stateRoot: '/nodes/a', csp: 'QEMU', metadata: 'http://10.42.0.1:8080' }, { stateRoot: '/nodes/a' }],
    ['Azure with --metadata: THIM and the quote endpoint there', { stateRoot: '/', csp: 'Azure', metadata: 'http://127.0.0.1:8080/' }, { stateRoot: '/', metadataUrl: 'http://127.0.0.1:8080' }],
    ['GCP without --metadata: the cloud default', { stateRoot: '/', csp: 'GCP', metadata: '' }, { stateRoot: '/' }],
    ['a file: metadata source is no service', { stateRoot: '/', csp: 'AWS', metadata: 'file:/m.json' }, { stateRoot: '/' }],
  ];
  for (const [name, config, want] of cases) {
    it(name, () => assert.deepEqual(nodeInterfaces(config), want));
  }
});
