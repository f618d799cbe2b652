/**
 * The local cluster's artifact server (docs/protocol/components.md): serves the packed Kubernetes
 * components (tools/k8s-testenv/scripts/pack.sh, `<root>/<version>/<file>`) over plain HTTP, GET
 * and HEAD only, to the nodes of the private network. The artifacts are checked by hash on the
 * node, so the transport needs no authentication. Run as its own process inside the router
 * namespace (listening on the bridge address) by {@link startArtifactServer}.
 *
 *   artifact-server.ts <root> <host> <port>
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join, normalize, sep } from 'node:path';

/** Serves files below `root`; anything outside, missing or not a regular file is 404. */
export function artifactServer(root: string): Server {
  const base = normalize(root).replace(/\/$/, '');
  return createServer((req, res) => {
    void (async () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405).end();
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const file = normalize(join(base, path));
      if (!file.startsWith(`${base}${sep}`) || file.slice(base.length + 1).split(sep).some((p) => p.startsWith('.'))) return void res.writeHead(404).end();
      const st = await stat(file).catch(() => undefined);
      if (!st?.isFile()) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': st.size, 'content-type': 'application/octet-stream' });
      if (req.method === 'HEAD') return void res.end();
      createReadStream(file).pipe(res);
      process.stdout.write(`${JSON.stringify({ msg: 'artifact served', path, bytes: st.size, from: req.socket.remoteAddress })}\n`);
    })().catch(() => res.writeHead(500).end());
  });
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [root, host, port] = process.argv.slice(2);
  if (!root || !host || !port) throw new Error('usage: artifact-server.ts <root> <host> <port>');
  artifactServer(root).listen(Number(port), host, () => process.stdout.write(`${JSON.stringify({ msg: 'artifact server listening', root, host, port: Number(port) })}\n`));
}
