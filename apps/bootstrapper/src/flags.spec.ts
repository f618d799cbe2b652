import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError, parseFlags, USAGE } from './flags.js';

describe('bootstrapper flags', () => {
  it('takes the variant and CSP from the environment like the reference, with sane defaults', () => {
    const c = parseFlags([], { CONSTEL_ATTESTATION_VARIANT: 'qemu-vtpm', CONSTEL_CSP: 'QEMU' })!;
    assert.equal(c.variant.name, 'qemu-vtpm');
    assert.equal(c.csp, 'QEMU');
    assert.equal(c.initPort, 9000);
    assert.equal(c.joinServicePort, 30090);
    assert.equal(c.tpm, '/dev/tpmrm0');
    assert.equal(c.stateDiskPbkdf, 'light');
  });

  it('flags win over the environment', () => {
    const c = parseFlags(['--attestation-variant', 'dummy', '--k8s-backend=kubeadm', '--metadata', 'file:/m.json', '--node-name', 'worker-1', '--tpm', 'unix:/tmp/tpm.sock', '--address', '127.0.0.11', '--address', '::1'], {
      CONSTEL_ATTESTATION_VARIANT: 'qemu-vtpm',
    })!;
    assert.equal(c.variant.name, 'dummy');
    assert.deepEqual(c.addresses, ['127.0.0.11', '::1']);
    assert.equal(parseFlags(['--attestation-variant', 'dummy', '--state-disk-pbkdf', 'benchmarked'], {})!.stateDiskPbkdf, 'benchmarked');
  });

  it('has no simulated-backend flags: the verification service is the chart\'s DaemonSet (docs/adr/0028), the local backend its own program', () => {
    for (const flag of ['--verify-grpc-port=30081', '--local-apps=/c/apps/programs.json', '--key-service-port=9009', '--api-server-port=0', '--join-attestation-config=/a.json']) {
      assert.throws(() => parseFlags(['--attestation-variant=dummy', flag], {}), (e: unknown) => e instanceof Error && /unknown|Unknown/.test(e.message), flag);
    }
  });

  it('explains what is wrong', () => {
    assert.throws(() => parseFlags([], {}), (e: unknown) => e instanceof FlagError && /attestation variant is required/.test(e.message));
    assert.throws(() => parseFlags(['--attestation-variant', 'nope'], {}), /unknown OID/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--k8s-backend', 'kind'], {}), /want kubeadm \(simulated nodes run tools\/simulated-node\)/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--metadata', 'file:/m.json'], {}), /--node-name is required/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--tpm', 'swtpm'], {}), /invalid --tpm/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--init-port', '70000'], {}), /between 0 and 65535/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--state-disk-pbkdf', 'toString'], {}), /unknown --state-disk-pbkdf "toString": want light or benchmarked/);
    assert.throws(() => parseFlags(['--attestation-variant', 'dummy', '--join-source-address', 'node-1'], {}), /invalid --join-source-address "node-1": want an IP address/);
    assert.equal(parseFlags(['-h'], {}), null);
  });

  it('--join-source-address: join.API connections from the node\'s own IP (docs/adr/0008)', () => {
    assert.equal(parseFlags(['--attestation-variant', 'dummy'], {})!.joinSourceAddress, undefined);
    assert.equal(parseFlags(['--attestation-variant', 'dummy', '--join-source-address=127.42.0.11'], {})!.joinSourceAddress, '127.42.0.11');
  });
});

describe('bootstrapper flags: --join-timeout', () => {
  const timeout = (...flags: string[]) => parseFlags(['--attestation-variant', 'dummy', ...flags], {})!.joinTimeoutMs;

  it('defaults to the reference\'s 5 minutes and takes Go-style durations', () => {
    assert.equal(timeout(), 5 * 60_000);
    assert.equal(timeout('--join-timeout=20m'), 20 * 60_000);
    assert.equal(timeout('--join-timeout', '90s'), 90_000);
    assert.equal(timeout('--join-timeout=1h30m'), 90 * 60_000);
    assert.equal(timeout('--join-timeout=1500ms'), 1500);
    assert.equal(timeout('--join-timeout=24h'), 24 * 3_600_000);
  });

  it('refuses what is not a duration within 1s..24h, naming the flag', () => {
    for (const bad of ['20', '', 'm', '20 m', '-5m', '1.5m', '20min', '5m ', 'h1']) {
      assert.throws(() => timeout(`--join-timeout=${bad}`), (e: unknown) => e instanceof FlagError && e.message === `invalid --join-timeout "${bad}": want a duration like 90s, 20m or 1h30m`, bad);
    }
    assert.throws(() => timeout('--join-timeout=999ms'), (e: unknown) => e instanceof FlagError && /must be between 1s and 24h/.test(e.message));
    assert.throws(() => timeout('--join-timeout=24h1s'), /must be between 1s and 24h/);
    assert.throws(() => timeout('--join-timeout=0s'), /must be between 1s and 24h/);
  });

  it('is documented in --help', () => assert.match(USAGE, /--join-timeout <d> +deadline of a join's Kubernetes phase/));
});

describe('bootstrapper flags: cloud vTPM variants', () => {
  for (const variant of ['azure-trustedlaunch', 'aws-nitro-tpm', 'gcp-sev-es']) {
    it(`--attestation-variant ${variant}`, () => assert.equal(parseFlags(['--attestation-variant', variant], {})!.variant.name, variant));
  }
});
