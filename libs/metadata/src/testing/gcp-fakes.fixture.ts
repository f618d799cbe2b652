import { json, LoopbackServer, type FakeResponse, type SeenRequest } from './loopback-server.fixture.js';

/** One GCE instance in the GCP fakes. */
export interface FakeGceInstance {
  name: string;
  zone: string;
  ip: string;
  aliasIpRanges: string[];
  labels: Record<string, string>;
  attributes: Record<string, string>;
}

/** The project the GCP fakes replay. */
export interface FakeGcpCloud {
  project: string;
  projectNumber: string;
  instances: FakeGceInstance[];
  /** Name of the instance the metadata server describes. */
  self: string;
  /** Regional forwarding rules: region, address, labels. */
  forwardingRules: { region: string; address: string; labels: Record<string, string> }[];
  token: string;
}

const GOOGLE = { 'metadata-flavor': 'Google' };

/** Replays the GCE metadata server: `Metadata-Flavor: Google` required and echoed. */
export function gcpMetadataFake(cloud: FakeGcpCloud): LoopbackServer {
  return new LoopbackServer((req: SeenRequest): FakeResponse => {
    if (req.headers['metadata-flavor'] !== 'Google') return { status: 403, body: 'Missing Metadata-Flavor:Google header.', headers: GOOGLE };
    const me = cloud.instances.find((i) => i.name === cloud.self)!;
    const url = new URL(req.url, 'http://metadata');
    const p = url.pathname.replace(/^\/computeMetadata\/v1\//, '');
    const text = (body: string): FakeResponse => ({ status: 200, body, headers: { ...GOOGLE, 'content-type': 'application/text' } });
    switch (p) {
      case 'instance/name':
        return text(me.name);
      case 'instance/zone':
        return text(`projects/${cloud.projectNumber}/zones/${me.zone}`);
      case 'project/project-id':
        return text(cloud.project);
      case 'instance/network-interfaces/0/ip':
        return text(me.ip);
      case 'instance/network-interfaces/0/ip-aliases/':
        return json(me.aliasIpRanges, 200, GOOGLE);
      case 'instance/service-accounts/default/token':
        return json({ access_token: cloud.token, expires_in: 3599, token_type: 'Bearer' }, 200, GOOGLE);
    }
    const attr = /^instance\/attributes\/(.+)$/.exec(p);
    if (attr && me.attributes[decodeURIComponent(attr[1]!)] !== undefined) return text(me.attributes[decodeURIComponent(attr[1]!)]!);
    return { status: 404, body: 'Not Found', headers: GOOGLE };
  });
}

function gceInstance(cloud: FakeGcpCloud, i: FakeGceInstance) {
  const base = `https://compute.googleapis.com/compute/v1/projects/${cloud.project}`;
  return {
    kind: 'compute#instance',
    name: i.name,
    zone: `${base}/zones/${i.zone}`,
    status: 'RUNNING',
    labels: i.labels,
    networkInterfaces: [{ name: 'nic0', networkIP: i.ip, aliasIpRanges: i.aliasIpRanges.map((ipCidrRange) => ({ ipCidrRange, subnetworkRangeName: 'pods' })) }],
  };
}

/** Matches `labels.<key>=<value>` filters, the only form the provider sends. */
function labelFilter(url: URL): [string, string] | undefined {
  const m = /^labels\.([^=]+)=(.+)$/.exec(url.searchParams.get('filter') ?? '');
  return m ? [m[1]!, m[2]!] : undefined;
}

/** Replays the Compute Engine v1 calls of the provider (one zone per aggregated page). */
export function gcpComputeFake(cloud: FakeGcpCloud): LoopbackServer {
  return new LoopbackServer((req: SeenRequest): FakeResponse => {
    if (req.headers.authorization !== `Bearer ${cloud.token}`) return json({ error: { code: 401, message: 'Request had invalid authentication credentials.' } }, 401);
    const url = new URL(req.url, 'http://compute');
    const pre = `/compute/v1/projects/${cloud.project}`;
    const get = new RegExp(`^${pre}/zones/([^/]+)/instances/([^/]+)$`).exec(url.pathname);
    if (get) {
      const i = cloud.instances.find((x) => x.zone === get[1] && x.name === get[2]);
      return i ? json(gceInstance(cloud, i)) : json({ error: { code: 404 } }, 404);
    }
    const f = labelFilter(url);
    const match = (labels: Record<string, string>) => !f || labels[f[0]] === f[1];
    if (url.pathname === `${pre}/aggregated/instances`) {
      const zones = [...new Set(cloud.instances.map((i) => i.zone))].sort();
      const page = Number(url.searchParams.get('pageToken') ?? '0');
      const zone = zones[page];
      const items = zone ? { [`zones/${zone}`]: { instances: cloud.instances.filter((i) => i.zone === zone && match(i.labels)).map((i) => gceInstance(cloud, i)) } } : {};
      return json({ kind: 'compute#instanceAggregatedList', items, ...(page + 1 < zones.length ? { nextPageToken: String(page + 1) } : {}) });
    }
    const fr = new RegExp(`^${pre}/(?:regions/([^/]+)|global)/forwardingRules$`).exec(url.pathname);
    if (fr) {
      const items = cloud.forwardingRules.filter((r) => fr[1] !== undefined && r.region === fr[1] && match(r.labels)).map((r) => ({ IPAddress: r.address, IPProtocol: 'TCP', portRange: '6443-6443', labels: r.labels }));
      return json({ kind: 'compute#forwardingRuleList', items });
    }
    return json({ error: { code: 404 } }, 404);
  });
}
