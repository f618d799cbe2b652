import { json, LoopbackServer, type FakeResponse, type SeenRequest } from './loopback-server.fixture.js';

/** One VM of a scale set in the Azure fakes. */
export interface FakeAzureVm {
  computerName: string;
  ip: string;
}

/** One scale set in the Azure fakes. */
export interface FakeAzureScaleSet {
  name: string;
  tags: Record<string, string>;
  vms: FakeAzureVm[];
}

/** The cloud the Azure fakes replay: one resource group, its scale sets, and which VM "we" are. */
export interface FakeAzureCloud {
  subscriptionId: string;
  resourceGroup: string;
  scaleSets: FakeAzureScaleSet[];
  self: { scaleSet: string; index: number };
  loadBalancerIp: string;
  /** The managed-identity token IMDS hands out and ARM requires. */
  token: string;
}

/** ARM resource ID of VM `index` of scale set `set`. */
export function azureVmId(cloud: FakeAzureCloud, set: string, index: number): string {
  return `/subscriptions/${cloud.subscriptionId}/resourceGroups/${cloud.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${set}/virtualMachines/${index}`;
}

/** Replays Azure IMDS (`Metadata: true` required): instance, loadbalancer, managed-identity token. */
export function azureImdsFake(cloud: FakeAzureCloud): LoopbackServer {
  return new LoopbackServer((req: SeenRequest): FakeResponse => {
    if (req.headers.metadata !== 'true') return json({ error: 'Bad request. Required metadata header not specified' }, 400);
    const url = new URL(req.url, 'http://imds');
    const set = cloud.scaleSets.find((s) => s.name === cloud.self.scaleSet)!;
    const vm = set.vms[cloud.self.index]!;
    if (url.pathname === '/metadata/instance') {
      return json({
        compute: {
          azEnvironment: 'AzurePublicCloud',
          location: 'westeurope',
          name: `${set.name}_${cloud.self.index}`,
          osProfile: { adminUsername: '', computerName: vm.computerName, disablePasswordAuthentication: 'true' },
          resourceGroupName: cloud.resourceGroup,
          resourceId: azureVmId(cloud, set.name, cloud.self.index),
          subscriptionId: cloud.subscriptionId,
          tagsList: Object.entries(set.tags).map(([name, value]) => ({ name, value })),
          vmScaleSetName: set.name,
          vmId: '02aab8a4-74ef-476e-8182-f6d2ba4166a6',
          zone: '1',
        },
        network: { interface: [{ ipv4: { ipAddress: [{ privateIpAddress: vm.ip, publicIpAddress: '' }], subnet: [{ address: '10.9.0.0', prefix: '16' }] }, ipv6: { ipAddress: [] }, macAddress: '000D3AF806EC' }] },
      });
    }
    if (url.pathname === '/metadata/loadbalancer') {
      return json({ loadbalancer: { publicIpAddresses: [{ frontendIpAddress: cloud.loadBalancerIp, privateIpAddress: vm.ip }], inboundRules: [], outboundRules: [] } });
    }
    if (url.pathname === '/metadata/identity/oauth2/token') {
      if (url.searchParams.get('resource') !== 'https://management.azure.com/') return json({ error: 'invalid_resource' }, 400);
      return json({ access_token: cloud.token, expires_on: String(Math.floor(Date.now() / 1000) + 3600), resource: 'https://management.azure.com/', token_type: 'Bearer' });
    }
    return { status: 404 };
  });
}

/** Replays the three ARM list calls of the peer listing (one VM per page, so `nextLink` is followed). */
export function azureArmFake(cloud: FakeAzureCloud): LoopbackServer {
  const server: LoopbackServer = new LoopbackServer((req: SeenRequest): FakeResponse => {
    if (req.headers.authorization !== `Bearer ${cloud.token}`) return json({ error: { code: 'AuthenticationFailed' } }, 401);
    const url = new URL(req.url, 'http://arm');
    const rg = `/subscriptions/${cloud.subscriptionId}/resourceGroups/${cloud.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets`;
    if (url.pathname === rg) return json({ value: cloud.scaleSets.map((s) => ({ id: `${rg}/${s.name}`, name: s.name, tags: s.tags, location: 'westeurope' })) });
    const m = new RegExp(`^${rg}/([^/]+)/(virtualMachines|networkInterfaces)$`).exec(url.pathname);
    const set = m && cloud.scaleSets.find((s) => s.name === m[1]);
    if (!set) return { status: 404 };
    if (m[2] === 'networkInterfaces') {
      return json({
        value: set.vms.map((vm, i) => ({
          id: `${azureVmId(cloud, set.name, i)}/networkInterfaces/nic`,
          properties: { virtualMachine: { id: azureVmId(cloud, set.name, i) }, ipConfigurations: [{ properties: { primary: true, privateIPAddress: vm.ip } }] },
        })),
      });
    }
    const page = Number(url.searchParams.get('page') ?? '0');
    const vm = set.vms[page];
    const body: Record<string, unknown> = { value: vm ? [{ id: azureVmId(cloud, set.name, page), name: `${set.name}_${page}`, instanceId: String(page), tags: set.tags, properties: { osProfile: { computerName: vm.computerName } } }] : [] };
    if (page + 1 < set.vms.length) body.nextLink = `${server.url}${url.pathname}?api-version=${url.searchParams.get('api-version')}&page=${page + 1}`;
    return json(body);
  });
  return server;
}
