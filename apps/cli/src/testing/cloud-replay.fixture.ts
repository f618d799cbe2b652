/**
 * One loopback server replaying the cloud endpoints the cloud vTPM validators and issuers call,
 * in their documented shapes (docs/protocol/cloud-vtpm-variants.md): CA certificate downloads
 * (Azure CA Issuers URLs), the GCE metadata server (instance names), the Compute API
 * getShieldedInstanceIdentity (bearer token checked) and EC2 DescribeImages answering
 * TpmSupport v2.0 (the one answer moto cannot give).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The running replay and what it saw. */
export interface CloudReplay {
  readonly base: string;
  /** Paths of every request, in order. */
  readonly seen: string[];
  /** EC2 Query API calls: form body and Authorization header. */
  readonly ec2Calls: { body: string; authorization: string }[];
  /** Downloadable files by path (e.g. `/pki/ca1.der`). */
  readonly files: Map<string, Buffer>;
  /** The PEM the Compute API reports as the instance's signing key. */
  ekPub: string;
  stop(): Promise<void>;
}

const GCE_METADATA: Record<string, string> = {
  'project/project-id': 'asterism-test',
  'instance/zone': 'projects/1234/zones/europe-west3-a',
  'instance/name': 'worker-0',
};
const SHIELDED_IDENTITY_PATH = '/compute/v1/projects/asterism-test/zones/europe-west3-a/instances/worker-0/getShieldedInstanceIdentity';

/** DescribeImages answer for one image with TpmSupport v2.0 (EC2 Query API XML). */
function describeImagesXml(imageId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<DescribeImagesResponse><requestId>00000000-0000-0000-0000-000000000001</requestId><imagesSet><item><imageId>${imageId}</imageId><imageState>available</imageState><tpmSupport>v2.0</tpmSupport><bootMode>uefi</bootMode></item></imagesSet></DescribeImagesResponse>`;
}

/** Starts the replay on 127.0.0.1; the Compute API accepts only `Bearer <token>`. */
export async function startCloudReplay(token: string): Promise<CloudReplay> {
  const replay = { seen: [] as string[], ec2Calls: [] as CloudReplay['ec2Calls'], files: new Map<string, Buffer>(), ekPub: '' };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const url = req.url ?? '/';
      replay.seen.push(url);
      const send = (status: number, data: string | Buffer = '', type = 'text/plain') => res.writeHead(status, { 'content-type': type }).end(data);
      const file = replay.files.get(url);
      if (file) return send(200, file, 'application/pkix-cert');
      if (url.startsWith('/computeMetadata/v1/')) {
        const answer = GCE_METADATA[url.slice('/computeMetadata/v1/'.length)];
        if (req.headers['metadata-flavor'] !== 'Google' || answer === undefined) return send(404);
        return res.writeHead(200, { 'metadata-flavor': 'Google' }).end(answer);
      }
      if (url === SHIELDED_IDENTITY_PATH) {
        if (req.headers.authorization !== `Bearer ${token}`) return send(401, '{"error":{"code":401}}', 'application/json');
        return send(200, JSON.stringify({ kind: 'compute#shieldedInstanceIdentity', signingKey: { ekPub: replay.ekPub } }), 'application/json');
      }
      if (req.method === 'POST' && url === '/' && new URLSearchParams(body).get('Action') === 'DescribeImages') {
        replay.ec2Calls.push({ body, authorization: String(req.headers.authorization ?? '') });
        return send(200, describeImagesXml(new URLSearchParams(body).get('ImageId.1') ?? ''), 'text/xml');
      }
      send(404);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(replay, {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
