#!/usr/bin/env node
/**
 * A QEMU metadata API (docs/protocol/metadata.md) for test VMs of the node image: `/self` (the
 * instance whose address is the caller's), `/peers`, `/endpoint`, `/initsecrethash`. Runs inside
 * the VM network's namespace on the bridge address.
 * Usage: metadata-server.ts <listen host> <port> <instances.json> <init secret hash file>
 * instances.json: [{"Name", "ProviderID", "Role", "VPCIP", ...}] as the API returns them.
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const [host, port, instancesPath, hashPath] = process.argv.slice(2);
if (!host || !port || !instancesPath || !hashPath) {
  process.stderr.write('usage: metadata-server.ts <host> <port> <instances.json> <init-secret-hash-file>\n');
  process.exit(2);
}
const instances = JSON.parse(readFileSync(instancesPath, 'utf8')) as Array<{ Name: string; VPCIP: string }>;
const hash = readFileSync(hashPath, 'utf8').trim();

const server = createServer((req, res) => {
  const send = (status: number, body: string, type = 'application/json') => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
  if (req.method !== 'GET') return send(405, 'method not allowed', 'text/plain');
  const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  process.stdout.write(`${JSON.stringify({ msg: 'metadata request', path: req.url, peer })}\n`);
  switch (req.url) {
    case '/self': {
      const self = instances.find((i) => i.VPCIP === peer);
      return self ? send(200, JSON.stringify(self)) : send(404, `no instance with address ${peer}`, 'text/plain');
    }
    case '/peers':
      return send(200, JSON.stringify(instances));
    case '/endpoint': {
      const cp = instances.find((i) => /^control-plane.*0$/.test(i.Name));
      return cp ? send(200, JSON.stringify(cp.VPCIP)) : send(404, 'no control plane', 'text/plain');
    }
    case '/initsecrethash':
      return send(200, hash, 'text/plain');
    default:
      return send(404, 'not found', 'text/plain');
  }
});
server.listen(Number(port), host, () => process.stdout.write(`${JSON.stringify({ msg: 'metadata API listening', host, port })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
