import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answer } from './metadata-api.js';
import { nodeAddress } from './network.js';
import { qemuArgs } from './vm-node.js';
import { dhcpConfig, vmNic } from './vm-network.js';
import { freeIndex } from './vm-workers.js';

const file = {
  initSecretHash: '$2a$04$hash',
  instances: [
    { Name: 'control-plane-0', ProviderID: 'local:///control-plane-0', Role: 'ControlPlane' as const, VPCIP: '10.42.0.10', SecondaryIPRange: '', AliasIPRanges: null },
    { Name: 'vm-worker-0', ProviderID: 'local:///vm-worker-0', Role: 'Worker' as const, VPCIP: '10.42.0.11', SecondaryIPRange: '', AliasIPRanges: null },
  ],
};

describe('QEMU metadata API of the local cluster', () => {
  it('answers /self by the caller address with the QEMU ProviderID, and 404 for an unknown caller', () => {
    const self = answer(file, 'GET', '/self', '10.42.0.11');
    assert.equal(self.status, 200);
    assert.deepEqual(JSON.parse(self.body), { ...file.instances[1], ProviderID: 'qemu:///hostname/vm-worker-0' });
    assert.equal(answer(file, 'GET', '/self', '10.42.0.99').status, 404);
  });

  it('answers /peers, /endpoint (control-plane-0) and /initsecrethash; other paths 404, other methods 405', () => {
    assert.equal((JSON.parse(answer(file, 'GET', '/peers', 'x').body) as unknown[]).length, 2);
    assert.equal(JSON.parse(answer(file, 'GET', '/endpoint', 'x').body), '10.42.0.10');
    assert.deepEqual(answer(file, 'GET', '/initsecrethash', 'x'), { status: 200, body: '$2a$04$hash', type: 'text/plain' });
    assert.equal(answer(file, 'GET', '/nope', 'x').status, 404);
    assert.equal(answer(file, 'POST', '/self', '10.42.0.11').status, 405);
    assert.equal(answer({ ...file, instances: [file.instances[1]!] }, 'GET', '/endpoint', 'x').status, 404);
  });
});

describe('VM network and QEMU arguments', () => {
  it('gives each node index its own tap and MAC, and a static lease to the address of the plan', () => {
    assert.deepEqual(vmNic(4), { tap: 'ast-t4', mac: '52:54:00:42:00:04' });
    assert.deepEqual(vmNic(26), { tap: 'ast-t26', mac: '52:54:00:42:00:1a' });
    assert.throws(() => vmNic(-1));
    const conf = dhcpConfig('/x/leases', [{ node: nodeAddress('vm-worker-0', 4), nic: vmNic(4) }]);
    assert.match(conf, /^interface ast0$/m);
    assert.match(conf, /^static_lease 52:54:00:42:00:04 10\.42\.0\.14$/m);
    assert.match(conf, /^opt router 10\.42\.0\.1$/m);
    // The pool for unknown MACs lies outside the nodes' addresses.
    assert.match(conf, /^start 10\.42\.0\.240$/m);
  });

  it('boots OVMF + the read-only image, tpm-crb on the swtpm socket, the state disk with serial "state", the tap with the MAC, TCG', () => {
    const p = { dir: '/n', console: '/n/console.log', monitor: '/n/monitor.sock', vars: '/n/vars.fd', tpmDir: '/n/tpm', tpmSocket: '/n/tpm/vm.sock', stateDisk: '/n/state.img' };
    const args = qemuArgs(p, '/img.raw', vmNic(3), { memoryMiB: 2048, cpus: 1, stateDiskMiB: 1024 }).join(' ');
    assert.match(args, /q35,accel=tcg/);
    assert.match(args, /file=\/img\.raw,.*readonly|readonly=on,file=\/img\.raw/);
    assert.match(args, /virtio-blk-pci,drive=state,serial=state/);
    assert.match(args, /tap,id=n0,ifname=ast-t3,script=no,downscript=no/);
    assert.match(args, /mac=52:54:00:42:00:03/);
    assert.match(args, /socket,id=chrtpm,path=\/n\/tpm\/vm\.sock/);
    assert.doesNotMatch(args, /-no-reboot|enable-kvm/);
  });
});

describe('address-plan index of a VM added to a running cluster', () => {
  const ns = (name: string) => ({ name, role: 'Worker' as const, ip: '', swtpm: 1, bootstrapper: 1 });
  const vm = (name: string, index: number) => ({ ...ns(name), vm: { index, image: '/i.raw', tap: `ast-t${index}`, mac: '', memoryMiB: 2048 } });

  it('takes the next index after the namespace nodes and the VMs, and reuses the index of a removed VM', () => {
    assert.equal(freeIndex({ nodes: [ns('control-plane-0'), ns('control-plane-1'), ns('worker-0')] }), 3);
    assert.equal(freeIndex({ nodes: [ns('control-plane-0'), ns('worker-0'), vm('vm-worker-0', 2)] }), 3);
    // vm-worker-0 (index 1) removed while vm-worker-tampered (index 3) runs: the count of nodes (2) is free.
    assert.equal(freeIndex({ nodes: [ns('control-plane-0'), vm('vm-worker-tampered', 3)] }), 2);
    // The count of nodes (3) is the running VM's index: the next one is taken.
    assert.equal(freeIndex({ nodes: [ns('control-plane-0'), ns('worker-0'), vm('vm-worker-tampered', 3)] }), 4);
  });
});
