import { json, LoopbackServer, type FakeResponse, type SeenRequest } from './loopback-server.fixture.js';

/** One EC2 instance as the IMDS fake describes it. */
export interface FakeEc2Instance {
  instanceId: string;
  region: string;
  availabilityZone: string;
  privateIp: string;
  imageId: string;
  hostname: string;
  tags: Record<string, string>;
}

const TOKEN = 'AQAEAFakeSessionTokenForTests==';

/**
 * Replays IMDSv2 as documented by AWS (docs/protocol/cloud-metadata.md, "AWS"): session token by
 * PUT, 401 without it, the identity document, local-hostname and instance tags (404 if absent).
 */
export function awsImdsFake(instance: FakeEc2Instance): LoopbackServer {
  return new LoopbackServer((req: SeenRequest): FakeResponse => {
    if (req.url === '/latest/api/token') {
      if (req.method !== 'PUT') return { status: 405 };
      if (!req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return { status: 400 };
      return { status: 200, body: TOKEN, headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' } };
    }
    if (req.headers['x-aws-ec2-metadata-token'] !== TOKEN) return { status: 401 };
    if (req.url === '/latest/dynamic/instance-identity/document') {
      return json({
        accountId: '123456789012',
        architecture: 'x86_64',
        availabilityZone: instance.availabilityZone,
        billingProducts: null,
        devpayProductCodes: null,
        marketplaceProductCodes: null,
        imageId: instance.imageId,
        instanceId: instance.instanceId,
        instanceType: 'm6a.xlarge',
        kernelId: null,
        pendingTime: '2026-11-23T10:00:00Z',
        privateIp: instance.privateIp,
        ramdiskId: null,
        region: instance.region,
        version: '2017-09-30',
      });
    }
    if (req.url === '/latest/meta-data/local-hostname') return { status: 200, body: instance.hostname };
    const tag = /^\/latest\/meta-data\/tags\/instance\/(.+)$/.exec(req.url);
    if (tag) {
      const v = instance.tags[decodeURIComponent(tag[1]!)];
      return v === undefined ? { status: 404 } : { status: 200, body: v };
    }
    return { status: 404 };
  });
}
