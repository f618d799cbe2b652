/**
 * The local network's side of VM nodes (docs/adr/0039-vm-nodes-local-cluster.md): per VM a tap
 * device on the cluster bridge inside the router namespace, its pod subnet routed to it, and one
 * DHCP server (busybox udhcpd on the bridge) with a static lease per VM MAC, so a VM gets the
 * address the cluster's address plan gives its node index. Nothing is configured in the host's own
 * network namespace; deleting the router namespace removes the taps.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startDetached, stopDetached } from '../detached.js';
import type { ClusterLayout } from '../layout.js';
import { LocalNetwork, NETWORK, type Exec, type NodeAddress } from './network.js';

/** A VM's NIC: the tap device in the router namespace and the MAC QEMU gives the guest. */
export interface VmNic {
  tap: string;
  mac: string;
}

/** The tap name and MAC of the VM at node index `index` (locally administered, QEMU's prefix). */
export function vmNic(index: number): VmNic {
  if (!Number.isInteger(index) || index < 0 || index > 200) throw new Error(`node index ${index} out of range`);
  return { tap: `ast-t${index}`, mac: `52:54:00:42:00:${index.toString(16).padStart(2, '0')}` };
}

/** The udhcpd configuration: a static lease per VM; the pool is outside the nodes' addresses. */
export function dhcpConfig(leaseFile: string, vms: ReadonlyArray<{ node: NodeAddress; nic: VmNic }>): string {
  return [
    `start ${NETWORK.prefix}.240`,
    `end ${NETWORK.prefix}.250`,
    `interface ${NETWORK.bridge}`,
    `lease_file ${leaseFile}`,
    'opt subnet 255.255.255.0',
    `opt router ${NETWORK.routerIp}`,
    'opt lease 86400',
    ...vms.map((v) => `static_lease ${v.nic.mac} ${v.node.ip}`),
    '',
  ].join('\n');
}

/** Creates a VM's tap on the bridge and routes its pod subnet to its address. */
export async function addVmTap(node: NodeAddress, nic: VmNic, exec?: Exec): Promise<void> {
  const ip = (args: string[]) => new LocalNetwork(exec).ipInRouter(args);
  await ip(['tuntap', 'add', 'dev', nic.tap, 'mode', 'tap']);
  await ip(['link', 'set', nic.tap, 'master', NETWORK.bridge, 'up']);
  await ip(['route', 'replace', node.podSubnet, 'via', node.ip]);
}

/** Removes a VM's tap (and with it the route's neighbour); a missing tap is fine. */
export async function removeVmTap(nic: VmNic, exec?: Exec): Promise<void> {
  await new LocalNetwork(exec).ipInRouter(['link', 'del', nic.tap]).catch(() => undefined);
}

/**
 * (Re)starts the DHCP server with a static lease for every VM; returns its pid. udhcpd reads its
 * configuration once, so adding a VM restarts it (`previous`: the pid to stop first).
 */
export async function startDhcp(layout: ClusterLayout, vms: ReadonlyArray<{ node: NodeAddress; nic: VmNic }>, previous?: number): Promise<number> {
  if (previous) await stopDetached(previous, 2000);
  const conf = join(layout.root, 'udhcpd.conf');
  const leases = join(layout.root, 'udhcpd.leases');
  await writeFile(conf, dhcpConfig(leases, vms), { mode: 0o600 });
  await writeFile(leases, '');
  // -a 100: wait 100 ms (not 2 s) for an ARP reply before an offer (one bridge, known leases).
  return startDetached('dhcp', 'nsenter', [`--net=/run/netns/${NETWORK.routerNamespace}`, 'busybox', 'udhcpd', '-f', '-a', '100', conf], join(layout.root, 'udhcpd.log')).pid;
}
