import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError, parseFlags } from './flags.js';

describe('parseFlags', () => {
  it('uses the reference defaults', () => {
    assert.deepEqual(parseFlags([]), {
      port: 9000,
      host: '0.0.0.0',
      masterSecretPath: '/var/config/mastersecret',
      saltPath: '/var/config/salt',
      metricsPort: 9101,
      verbosity: 0,
      workers: 1,
    });
  });

  it('parses Go-style flags', () => {
    const c = parseFlags(['--port=9100', '--master-secret', '/m', '--salt=/s', '-v', '-1', '--metrics-port=-1']);
    assert.equal(c?.port, 9100);
    assert.equal(c?.masterSecretPath, '/m');
    assert.equal(c?.saltPath, '/s');
    assert.equal(c?.verbosity, -1);
    assert.equal(c?.metricsPort, -1);
  });

  it('parses --workers', () => assert.equal(parseFlags(['--workers=2'])?.workers, 2));

  it('returns null for --help', () => assert.equal(parseFlags(['--help']), null));

  const bad: Array<[string, string[]]> = [
    ['unknown flag', ['--prot=1']],
    ['non-numeric port', ['--port=abc']],
    ['port out of range', ['--port=70000']],
    ['positional argument', ['extra']],
    ['zero workers', ['--workers=0']],
    ['too many workers', ['--workers=65']],
  ];
  for (const [name, argv] of bad) it(`rejects ${name}`, () => assert.throws(() => parseFlags(argv), FlagError));
});
