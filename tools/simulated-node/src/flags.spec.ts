import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError, parseFlags } from '@asterism/bootstrapper/runtime';
import { splitSimulatedFlags } from './flags.js';

describe('simulated node flags', () => {
  it('takes its own flags out and leaves the bootstrapper\'s to the bootstrapper', () => {
    const { flags, rest } = splitSimulatedFlags(['--attestation-variant=dummy', '--k8s-backend=local', '--verify-grpc-port', '31081', '--metadata=file:/m.json', '--node-name=n', '--local-apps=/c/apps/programs.json', '--api-server-port=0']);
    assert.deepEqual(rest, ['--attestation-variant=dummy', '--metadata=file:/m.json', '--node-name=n']);
    assert.deepEqual(flags, { joinAttestationConfig: undefined, keyServicePort: 9009, localJoinServicePort: 30090, apiServerPort: 0, verifyGrpcPort: 31081, verifyHttpPort: 30080, localApps: '/c/apps/programs.json' });
    assert.equal(parseFlags(rest, {})!.nodeName, 'n');
  });

  it('serves the verification service by default, on other ports, or not at all', () => {
    const cases: Array<[string, string[], number, number]> = [
      ['default', [], 30081, 30080],
      ['other ports', ['--verify-grpc-port=31081', '--verify-http-port=31080'], 31081, 31080],
      ['off', ['--verify-grpc-port=0'], 0, 30080],
    ];
    for (const [name, args, grpcPort, httpPort] of cases) {
      const { flags } = splitSimulatedFlags(args);
      assert.deepEqual([flags.verifyGrpcPort, flags.verifyHttpPort], [grpcPort, httpPort], name);
    }
  });

  it('explains what is wrong', () => {
    const refused: Array<[string[], RegExp]> = [
      [['--k8s-backend=kubeadm'], /a simulated node runs the local backend/],
      [['--local-apps='], /--local-apps needs a file/],
      [['--verify-grpc-port=70000'], /between 0 and 65535/],
      [['--key-service-port'], /--key-service-port needs a value/],
    ];
    for (const [argv, message] of refused) assert.throws(() => splitSimulatedFlags(argv), (e: unknown) => e instanceof FlagError && message.test(e.message), argv.join(' '));
  });
});
