import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StaticFileMetadata } from '@asterism/metadata';
import { MetadataPeerDirectory } from './peer-directory.js';

/** The local cluster's metadata file (libs/metadata StaticFileMetadata shape), as the joinservice reads it. */
function metadataFile(instances: Array<{ Name: string; Role: string; VPCIP: string }>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'peer-directory-')), 'metadata.json');
  writeFileSync(path, JSON.stringify({ instances: instances.map((i) => ({ ...i, ProviderID: `local:///${i.Name}`, SecondaryIPRange: '', AliasIPRanges: null })), loadBalancer: { host: '127.42.0.10', port: '6443' }, initSecretHash: 'x', uid: 'local' }));
  return path;
}

describe('MetadataPeerDirectory over the local cluster metadata file', () => {
  const path = metadataFile([
    { Name: 'control-plane-0', Role: 'ControlPlane', VPCIP: '127.42.0.10' },
    { Name: 'worker-0', Role: 'Worker', VPCIP: '127.42.0.11' },
    { Name: 'twin-a', Role: 'Worker', VPCIP: '127.42.0.20' },
    { Name: 'twin-b', Role: 'ControlPlane', VPCIP: '127.42.0.20' },
    { Name: 'no-ip', Role: 'Worker', VPCIP: '' },
  ]);
  const directory = new MetadataPeerDirectory(new StaticFileMetadata(path, ''));
  const cases: Array<[string, string, { name: string; role: string } | undefined]> = [
    ['a worker by its IP', '127.42.0.11', { name: 'worker-0', role: 'Worker' }],
    ['the control plane', '127.42.0.10', { name: 'control-plane-0', role: 'ControlPlane' }],
    ['an IP nobody has', '127.0.0.1', undefined],
    ['an IP listed twice is ambiguous', '127.42.0.20', undefined],
    ['an empty IP never matches', '', undefined],
  ];
  for (const [name, ip, want] of cases) it(name, async () => assert.deepEqual(await directory.lookup(ip), want));
});
