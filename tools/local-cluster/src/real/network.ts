/**
 * The private network of the real-node backend (docs/adr/0019-node-runtime.md): a router network
 * namespace with a bridge at `<prefix>.1/24`, and per node a network namespace whose `eth0`
 * (a veth into the bridge) has `<prefix>.<10+i>`, a default route via the router, and the pod
 * subnet `10.244.<i>.0/24` routed to it. Every address lives only inside namespaces this module
 * creates and removes; nothing is configured in the host's own network namespace.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** Names and addresses of the network (fixed: one real local cluster per machine). */
export const NETWORK = {
  routerNamespace: 'asterism-net',
  bridge: 'ast0',
  prefix: '10.42.0',
  routerIp: '10.42.0.1',
  podCidr: '10.244.0.0/16',
  nodeNamespacePrefix: 'asterism-',
} as const;

/** One node's place in the network. */
export interface NodeAddress {
  index: number;
  name: string;
  namespace: string;
  ip: string;
  podSubnet: string;
  /** Host end of the veth, inside the router namespace. */
  veth: string;
}

/** Address plan of node `index` (0-based). */
export function nodeAddress(name: string, index: number): NodeAddress {
  if (index < 0 || index > 200) throw new Error(`node index ${index} out of range`);
  return {
    index,
    name,
    namespace: `${NETWORK.nodeNamespacePrefix}${name}`,
    ip: `${NETWORK.prefix}.${10 + index}`,
    podSubnet: `10.244.${index}.0/24`,
    veth: `ast-v${index}`,
  };
}

/** Runs a command and fails with its stderr (the ip tool's messages are precise). */
export type Exec = (cmd: string, args: string[]) => Promise<void>;

const defaultExec: Exec = async (cmd, args) => {
  try {
    await execFileP(cmd, args);
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`${cmd} ${args.join(' ')}: ${stderr || (err as Error).message}`);
  }
};

/** Creates and removes the namespaces, bridge and veths. */
export class LocalNetwork {
  constructor(private readonly exec: Exec = defaultExec) {}

  /** The router namespace and its bridge; fails if it exists (one real cluster per machine). */
  async createRouter(): Promise<void> {
    const ns = NETWORK.routerNamespace;
    await this.exec('ip', ['netns', 'add', ns]);
    await this.ipIn(ns, ['link', 'set', 'lo', 'up']);
    await this.ipIn(ns, ['link', 'add', NETWORK.bridge, 'type', 'bridge']);
    await this.ipIn(ns, ['addr', 'add', `${NETWORK.routerIp}/24`, 'dev', NETWORK.bridge]);
    await this.ipIn(ns, ['link', 'set', NETWORK.bridge, 'up']);
    await this.sysctl(ns, 'net.ipv4.ip_forward=1');
  }

  /** The node's namespace, wired to the bridge, with its pod subnet routed to it. */
  async addNode(node: NodeAddress): Promise<void> {
    const ns = node.namespace;
    if (namespaceExists(ns)) await this.exec('ip', ['netns', 'del', ns]);
    await this.exec('ip', ['netns', 'add', ns]);
    await this.ipIn(ns, ['link', 'set', 'lo', 'up']);
    await this.ipIn(NETWORK.routerNamespace, ['link', 'add', node.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    await this.ipIn(NETWORK.routerNamespace, ['link', 'set', node.veth, 'master', NETWORK.bridge, 'up']);
    await this.ipIn(ns, ['addr', 'add', `${node.ip}/24`, 'dev', 'eth0']);
    await this.ipIn(ns, ['link', 'set', 'eth0', 'up']);
    await this.ipIn(ns, ['route', 'add', 'default', 'via', NETWORK.routerIp]);
    await this.sysctl(ns, 'net.ipv4.ip_forward=1');
    await this.ipIn(NETWORK.routerNamespace, ['route', 'replace', node.podSubnet, 'via', node.ip]);
  }

  /** Deletes node namespaces (their veths go with them) and, with `router`, the router namespace. */
  async removeAll(nodeNamespaces: string[], router = true): Promise<void> {
    for (const ns of [...nodeNamespaces, ...(router ? [NETWORK.routerNamespace] : [])]) {
      if (namespaceExists(ns)) await this.exec('ip', ['netns', 'del', ns]);
    }
  }

  /** Runs `ip <args>` inside the router namespace. */
  ipInRouter(args: string[]): Promise<void> {
    return this.ipIn(NETWORK.routerNamespace, args);
  }

  private ipIn(ns: string, args: string[]): Promise<void> {
    return this.exec('ip', ['-n', ns, ...args]);
  }

  private sysctl(ns: string, setting: string): Promise<void> {
    return this.exec('ip', ['netns', 'exec', ns, 'sysctl', '-qw', setting]);
  }
}

/** Whether `ip netns` knows the namespace. */
export function namespaceExists(ns: string): boolean {
  return existsSync(`/run/netns/${ns}`);
}
