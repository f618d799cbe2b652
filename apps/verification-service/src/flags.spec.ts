import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError } from '@asterism/service-runtime';
import { parseVerifyFlags } from './flags.js';

describe('verification-service flags', () => {
  it('defaults: the pod ports of the reference (gRPC 9090, HTTP 8080) on every address of the pod, the kernel TPM', () => {
    const c = parseVerifyFlags([], { CONSTEL_ATTESTATION_VARIANT: 'qemu-vtpm' })!;
    assert.deepEqual(
      { variant: c.variant.name, tpm: c.tpm, host: c.host, grpc: c.grpcPort, http: c.httpPort, root: c.stateRoot, csp: c.csp, metadata: c.metadata, v: c.verbosity },
      { variant: 'qemu-vtpm', tpm: '/dev/tpmrm0', host: '0.0.0.0', grpc: 9090, http: 8080, root: '/', csp: 'QEMU', metadata: '', v: 0 },
    );
  });

  it('flags win over the environment; Go-style single-dash flags work as in the chart', () => {
    const c = parseVerifyFlags(['-attestation-variant=dummy', '--tpm=unix:/run/asterism/swtpm.sock', '--host', '127.0.0.1', '--grpc-port=0', '--http-port=0', '-v=-1'], { CONSTEL_ATTESTATION_VARIANT: 'qemu-vtpm' })!;
    assert.deepEqual([c.variant.name, c.tpm, c.host, c.grpcPort, c.httpPort, c.verbosity], ['dummy', 'unix:/run/asterism/swtpm.sock', '127.0.0.1', 0, 0, -1]);
    const cloud = parseVerifyFlags(['--attestation-variant=gcp-sev-snp', '--metadata=http://127.0.0.1:8081'], { CONSTEL_CSP: 'GCP' })!;
    assert.deepEqual([cloud.csp, cloud.metadata], ['GCP', 'http://127.0.0.1:8081']);
    assert.equal(parseVerifyFlags(['--help'], {}), null);
  });

  const bad: Array<[string, string[], RegExp]> = [
    ['no variant', [], /the attestation variant is required/],
    ['unknown variant', ['--attestation-variant=qemu-vtmp'], /attestation variant: /],
    ['bad TPM', ['--attestation-variant=dummy', '--tpm=swtpm'], /invalid --tpm "swtpm"/],
    ['host name', ['--attestation-variant=dummy', '--host=localhost'], /invalid --host "localhost": want an IP address/],
    ['port out of range', ['--attestation-variant=dummy', '--http-port=65536'], /--http-port: must be between 0 and 65535/],
    ['same port twice', ['--attestation-variant=dummy', '--grpc-port=8080'], /--grpc-port and --http-port are both 8080/],
    ['unknown flag', ['--attestation-variant=dummy', '--init-port=9000'], /Unknown option '--init-port'/],
    ['unknown cloud', ['--attestation-variant=dummy', '--csp=openstack'], /unknown --csp "openstack": want QEMU, AWS, Azure or GCP/],
    ['metadata not a URL', ['--attestation-variant=dummy', '--metadata=file:/m.json'], /invalid --metadata "file:\/m\.json": want an http\(s\) URL/],
  ];
  for (const [name, args, message] of bad) {
    it(`refused: ${name}`, () => assert.throws(() => parseVerifyFlags(args, {}), (e: unknown) => e instanceof FlagError && message.test(e.message)));
  }
});
