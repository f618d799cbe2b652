/**
 * The QEMU metadata API (docs/protocol/metadata.md) for the local cluster's VM nodes, served from
 * the cluster's metadata file (the one the namespace nodes read directly), so both node kinds see
 * the same instances: `/self` (the instance whose VPC IP is the caller's), `/peers`, `/endpoint`,
 * `/initsecrethash`. The file is read per request (nodes added later appear at once). Runs as its
 * own process inside the router namespace on the bridge address, port 8080 (what the node image's
 * bootstrapper asks: docs/protocol/node-image.md "Interfaces").
 *
 *   metadata-api.ts <metadata.json> <host> <port>
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { InstanceMetadata } from '@asterism/metadata';

/** Port of the QEMU metadata API. */
export const METADATA_API_PORT = 8080;

interface MetadataFile {
  instances: InstanceMetadata[];
  initSecretHash: string;
}

/** One answer: status, body, content type. */
export interface MetadataAnswer {
  status: number;
  body: string;
  type: string;
}

const json = (v: unknown): MetadataAnswer => ({ status: 200, body: JSON.stringify(v), type: 'application/json' });
const text = (status: number, body: string): MetadataAnswer => ({ status, body, type: 'text/plain' });

/**
 * What the API answers `method path` from `peer` with, given the file's contents. A VM sees itself
 * under the QEMU provider's ProviderID (`qemu:///hostname/<name>`).
 */
export function answer(file: MetadataFile, method: string, path: string, peer: string): MetadataAnswer {
  if (method !== 'GET') return text(405, 'method not allowed');
  const instances = file.instances.map((i) => ({ ...i, ProviderID: `qemu:///hostname/${i.Name}` }));
  switch (path) {
    case '/self': {
      const self = instances.find((i) => i.VPCIP === peer);
      return self ? json(self) : text(404, `no instance with address ${peer}`);
    }
    case '/peers':
      return json(instances);
    case '/endpoint': {
      const cp = instances.find((i) => i.Name.startsWith('control-plane') && i.Name.endsWith('0'));
      return cp ? json(cp.VPCIP) : text(404, 'no control plane');
    }
    case '/initsecrethash':
      return text(200, file.initSecretHash);
    default:
      return text(404, 'not found');
  }
}

/** The server: reads `metadataFile` per request; logs one JSON line per request (no secret in it). */
export function metadataApi(metadataFile: string): Server {
  return createServer((req, res) => {
    const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    let a: MetadataAnswer;
    try {
      a = answer(JSON.parse(readFileSync(metadataFile, 'utf8')) as MetadataFile, req.method ?? '', req.url ?? '', peer);
    } catch (err) {
      a = text(503, `metadata file unreadable: ${(err as Error).message}`);
    }
    process.stdout.write(`${JSON.stringify({ msg: 'metadata request', path: req.url, peer, status: a.status })}\n`);
    res.writeHead(a.status, { 'content-type': a.type });
    res.end(a.body);
  });
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [file, host, port] = process.argv.slice(2);
  if (!file || !host || !port) throw new Error('usage: metadata-api.ts <metadata.json> <host> <port>');
  metadataApi(file).listen(Number(port), host, () => process.stdout.write(`${JSON.stringify({ msg: 'metadata API listening', host, port: Number(port) })}\n`));
}
