import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError, parseFlags } from './flags.js';

describe('bootstrapper flags', () => {
  it('takes the variant and CSP from the environment like the reference, with sane defaults', () => {
    const c = parseFlags([], { CONSTEL_ATTESTATION_VARIANT: 'qemu-vtpm', CONSTEL_CSP: 'QEMU' })!;
    assert.equal(c.variant.name, 'qemu-vtpm');
    assert.equal(c.csp, 'QEMU');
    assert.equal(c.initPort, 9000);
    assert.equal(c.joinServicePort, 30090);
    assert.equal(c.tpm, '/dev/tpmrm0');
    assert.equal(c.backend, 'kubeadm');
    assert.equal(c.stateDiskPbkdf, 'light');
  });

  it('flags win over the environment', () => {
    const c = parseFlags(['--attestation-variant', 'dummy', '--k8s-backend=local', '--metadata', 'file:/m.json', '--node-name', 'worker-1', '--tpm', 'unix:/tmp/tpm.sock', '--address', '127.0.0.11', '--address', '::1'], {
      CONSTEL_ATTESTATION_VARIANT: 'qemu-vtpm',
    })!;
    assert.equal(c.variant.name, 'dummy');
    assert.equal(c.backend, 'local');
    assert.deepEqual(c.addresses, ['127.0.0.11', '::1']);
    assert.equal(parseFlags(['--attestation-variant', 'dummy', '--state-disk-pbkdf', 'benchmarked'], {})!.stateDiskPbkdf, 'benchmarked');
  });

  it('serves the verification service on the local backend only (kubeadm: the chart\'s DaemonSet, docs/adr/0028)', () => {
    const local = ['--k8s-backend=local', '--metadata=file:/m.json', '--node-name=n'];
    const cases: Array<[string, string[], number, number]> = [
      ['local backend default', local, 30081, 30080],
      ['local backend, other ports', [...local, '--verify-grpc-port=31081', '--verify-http-port=31080'], 31081, 31080],
      ['local backend, off', [...local, '--verify-grpc-port=0'], 0, 30080],
      ['kubeadm default: off', [], 0, 30080],
      ['kubeadm, explicitly off', ['--verify-grpc-port=0'], 0, 30080],
    ];
    for (const [name, args, grpcPort, httpPort] of cases) {
      const c = parseFlags(['--attestation-variant=dummy', ...args], {})!;
      assert.deepEqual([c.verifyGrpcPort, c.verifyHttpPort], [grpcPort, httpPort], name);
    }
    assert.throws(
      () => parseFlags(['--attestation-variant=dummy', '--verify-grpc-port=30081'], {}),
      (e: unknown) => e instanceof FlagError && /--verify-grpc-port is for the local backend: kubeadm nodes get the verification service from the asterism-services chart/.test(e.message),
    );
  });

  it('explains what is wrong', () => {
    assert.throws(() => parseFlags([], {}), (e: unknown) => e instanceof FlagError && /attestation variant is required/.test(e.message));
    assert.throws(() => parseFlags(['--attestation-variant', 'nope'], {}), /unknown OID/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--k8s-backend', 'kind'], {}), /want kubeadm or local/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--metadata', 'file:/m.json'], {}), /--node-name is required/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--tpm', 'swtpm'], {}), /invalid --tpm/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--init-port', '70000'], {}), /between 0 and 65535/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--state-disk-pbkdf', 'toString'], {}), /unknown --state-disk-pbkdf "toString": want light or benchmarked/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--join-source-address', 'node-1'], {}), /invalid --join-source-address "node-1": want an IP address/);
    assert.equal(parseFlags(['-h'], {}), null);
  });

  it('--local-apps: the local backend\'s program bundles; refused elsewhere', () => {
    const local = ['--attestation-variant=dummy', '--k8s-backend=local'];
    assert.equal(parseFlags(local, {})!.localApps, undefined);
    assert.equal(parseFlags([...local, '--local-apps=/c/apps/programs.json'], {})!.localApps, '/c/apps/programs.json');
    assert.throws(() => parseFlags(['--attestation-variant=dummy', '--local-apps=/c/apps/programs.json'], {}), (e: unknown) => e instanceof FlagError && /--local-apps is for the local backend/.test(e.message));
    assert.throws(() => parseFlags([...local, '--local-apps='], {}), (e: unknown) => e instanceof FlagError && /--local-apps needs a file/.test(e.message));
  });

  it('--join-source-address: join.API connections from the node\'s own IP (docs/adr/0008)', () => {
    assert.equal(parseFlags(['--attestation-variant', 'dummy'], {})!.joinSourceAddress, undefined);
    assert.equal(parseFlags(['--attestation-variant', 'dummy', '--join-source-address=127.42.0.11'], {})!.joinSourceAddress, '127.42.0.11');
  });
});

describe('bootstrapper flags: cloud vTPM variants', () => {
  for (const variant of ['azure-trustedlaunch', 'aws-nitro-tpm', 'gcp-sev-es']) {
    it(`--attestation-variant ${variant}`, () => assert.equal(parseFlags(['--attestation-variant', variant], {})!.variant.name, variant));
  }
});
