import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { formatMemory, groupByName, processMemory, processName } from './memory.js';

const ID = 'a'.repeat(64);
const containers = new Map([[ID, 'kube-apiserver']]);

describe('real-node memory report', () => {
  const cases: Array<[string, string, string[], string, string]> = [
    ['a container process is named after its container', 'kube-apiserver', ['kube-apiserver'], `5:memory:/asterism/control-plane-0/kubepods/burstable/pod1/${ID}\n`, 'kube-apiserver'],
    ['the bootstrapper by its entry point', 'node', ['/usr/bin/node', '--import', 'tsx', '/w/apps/bootstrapper/src/main.ts'], '5:memory:/asterism/worker-0\n', 'bootstrapper'],
    ['the supervisor script, although its arguments name the bootstrapper', 'bash', ['bash', '/w/tools/local-cluster/node/node.sh', 'inside', 'dir', '--', 'node', '/w/apps/bootstrapper/src/main.ts'], '5:memory:/asterism/worker-0\n', 'node.sh'],
    ['a container ID nobody knows (a pause sandbox): its comm', 'pause', ['/pause'], `5:memory:/asterism/worker-0/kubepods/pod2/${'b'.repeat(64)}\n`, 'pause'],
    ['anything else: its comm', 'containerd', ['containerd', '--config', 'x'], '5:memory:/asterism/worker-0\n', 'containerd'],
  ];
  for (const [name, comm, args, cgroup, want] of cases) it(name, () => assert.equal(processName(comm, args, cgroup, containers), want));

  it('reads VmRSS, comm, cmdline and cgroup of each pid; skips ended processes and kernel threads', () => {
    const proc = mkdtempSync(join(tmpdir(), 'proc-'));
    const fake = (pid: number, rss: string | undefined, comm: string, cmdline: string, cgroup: string) => {
      mkdirSync(join(proc, String(pid)));
      writeFileSync(join(proc, String(pid), 'status'), `Name:\t${comm}\n${rss === undefined ? '' : `VmRSS:\t${rss} kB\n`}Threads:\t1\n`);
      writeFileSync(join(proc, String(pid), 'comm'), `${comm}\n`);
      writeFileSync(join(proc, String(pid), 'cmdline'), `${cmdline.split(' ').join('\0')}\0`);
      writeFileSync(join(proc, String(pid), 'cgroup'), cgroup);
    };
    fake(10, '2048', 'kube-apiserver', 'kube-apiserver --etcd', `5:memory:/asterism/cp/kubepods/pod1/${ID}\n`);
    fake(11, '512', 'containerd', 'containerd', '5:memory:/asterism/cp\n');
    fake(12, undefined, 'kworker', '', '');
    assert.deepEqual(processMemory([10, 11, 12, 13], containers, proc), [
      { pid: 10, name: 'kube-apiserver', rssKiB: 2048 },
      { pid: 11, name: 'containerd', rssKiB: 512 },
    ]);
  });

  it('reads this very process from the real /proc', () => {
    const [me] = processMemory([process.pid], new Map());
    assert.equal(me?.name, 'node');
    assert.ok((me?.rssKiB ?? 0) > 1024, `${me?.rssKiB} KiB`);
  });

  it('groups by name, largest first, and formats per node and in total', () => {
    const a = groupByName('worker-0', [
      { pid: 1, name: 'containerd-shim', rssKiB: 1024 },
      { pid: 2, name: 'kubelet', rssKiB: 61440 },
      { pid: 3, name: 'containerd-shim', rssKiB: 2048 },
    ]);
    assert.deepEqual(a.groups, [
      { name: 'kubelet', count: 1, rssKiB: 61440 },
      { name: 'containerd-shim', count: 2, rssKiB: 3072 },
    ]);
    assert.equal(a.totalKiB, 64512);
    const b = groupByName('worker-1', [{ pid: 4, name: 'kubelet', rssKiB: 20480 }]);
    assert.deepEqual(formatMemory([a, b]), ['worker-0: 63 MiB = kubelet 60, containerd-shim×2 3.0', 'worker-1: 20 MiB = kubelet 20', 'total: 83 MiB RSS over 2 nodes']);
  });
});
