import { writeFile, rename } from 'node:fs/promises';
import type { InstanceMetadata } from '@asterism/metadata';
import type { NodeSpec } from './layout.js';

/** The shared metadata file every node's StaticFileMetadata reads (atomically replaced). */
export async function writeMetadataFile(path: string, nodes: NodeSpec[], initSecretHash: string): Promise<void> {
  const instances: InstanceMetadata[] = nodes.map((n) => ({
    Name: n.name,
    ProviderID: `local:///${n.name}`,
    Role: n.role,
    VPCIP: n.ip,
    SecondaryIPRange: '',
    AliasIPRanges: null,
  }));
  const lb = nodes.find((n) => n.role === 'ControlPlane');
  const body = { instances, loadBalancer: { host: lb?.ip ?? '', port: '6443' }, initSecretHash, uid: 'local' };
  const tmp = `${path}.tmp`;
  await writeFile(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}
