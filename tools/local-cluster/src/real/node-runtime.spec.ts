import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cniConfig, containerdConfig, kubeletPatch, NODE_TPM_SOCKET, writeNodeConfig } from './node-config.js';
import { LocalNetwork, NETWORK, nodeAddress } from './network.js';

describe('real node runtime building blocks', () => {
  it('plans addresses, namespaces and pod subnets per node index', () => {
    for (const [name, index, ip, subnet] of [
      ['control-plane-0', 0, '10.42.0.10', '10.244.0.0/24'],
      ['worker-1', 3, '10.42.0.13', '10.244.3.0/24'],
    ] as const) {
      const a = nodeAddress(name, index);
      assert.equal(a.ip, ip);
      assert.equal(a.podSubnet, subnet);
      assert.equal(a.namespace, `asterism-${name}`);
      assert.ok(a.veth.length <= 15, 'interface names fit IFNAMSIZ');
    }
    assert.throws(() => nodeAddress('x', 201), /out of range/);
  });

  it('wires a node: namespace, veth into the router bridge, address, default route, pod route', async () => {
    const calls: string[] = [];
    const net = new LocalNetwork(async (cmd, args) => void calls.push([cmd, ...args].join(' ')));
    // A name no running cluster uses: addNode first deletes a namespace of the same name if it exists.
    await net.addNode(nodeAddress('unit-test-node', 1));
    assert.deepEqual(calls.filter((c) => !c.includes('sysctl')), [
      'ip netns add asterism-unit-test-node',
      'ip -n asterism-unit-test-node link set lo up',
      `ip -n ${NETWORK.routerNamespace} link add ast-v1 type veth peer name eth0 netns asterism-unit-test-node`,
      `ip -n ${NETWORK.routerNamespace} link set ast-v1 master ast0 up`,
      'ip -n asterism-unit-test-node addr add 10.42.0.11/24 dev eth0',
      'ip -n asterism-unit-test-node link set eth0 up',
      'ip -n asterism-unit-test-node route add default via 10.42.0.1',
      `ip -n ${NETWORK.routerNamespace} route replace 10.244.1.0/24 via 10.42.0.11`,
    ]);
  });

  it('containerd: the traps of these machines are configured (OOM score, fully qualified pause image, cgroupfs)', () => {
    const toml = containerdConfig('localhost/asterism/pause:3.10.1');
    assert.match(toml, /restrict_oom_score_adj = true/);
    assert.match(toml, /sandbox_image = "localhost\/asterism\/pause:3\.10\.1"/);
    assert.match(toml, /SystemdCgroup = false/);
  });

  it('CNI and kubelet patch carry the node subnet and cgroup root', () => {
    const cni = JSON.parse(cniConfig('10.244.2.0/24')) as { plugins: Array<{ type: string; ipam?: { ranges: Array<Array<{ subnet: string }>> } }> };
    assert.deepEqual(cni.plugins.map((p) => p.type), ['bridge', 'portmap']);
    assert.equal(cni.plugins[0]!.ipam!.ranges[0]![0]!.subnet, '10.244.2.0/24');
    assert.match(kubeletPatch('worker-0'), /^cgroupRoot: \/asterism\/worker-0$/m);
    assert.match(kubeletPatch('worker-0'), /^cgroupDriver: cgroupfs$/m);
  });

  it('node.env is private and refuses values that would break shell quoting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'node-cfg-'));
    const input = { node: nodeAddress('control-plane-0', 0), tpmSocket: '/c/nodes/control-plane-0/tpm/tpm.sock', sandboxImage: 'localhost/asterism/pause:3.10.1', images: ['/a.tar', '/b.tar'], cgroupDirs: ['/sys/fs/cgroup/pids/asterism/control-plane-0'] };
    await writeNodeConfig(dir, input);
    const env = readFileSync(join(dir, 'config', 'node.env'), 'utf8');
    assert.match(env, /^NODE_IMAGES='\/a\.tar \/b\.tar'$/m);
    // The vTPM: the node's own socket on the host, at one fixed path inside every node (docs/adr/0028).
    assert.match(env, /^NODE_TPM_SOCKET='\/c\/nodes\/control-plane-0\/tpm\/tpm\.sock'$/m);
    assert.match(env, new RegExp(`^NODE_TPM_AT='${NODE_TPM_SOCKET}'$`, 'm'));
    assert.equal(statSync(join(dir, 'config', 'node.env')).mode & 0o777, 0o600);
    assert.doesNotMatch(env, /K8S_BIN_DIR/, 'no Kubernetes binary from the host (docs/protocol/components.md)');
    await assert.rejects(writeNodeConfig(dir, { ...input, tpmSocket: "/it's" }), /quote/);
  });
});
