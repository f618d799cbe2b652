import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, levelFromVerbosity } from './logger.js';
import { REDACTED, Secret, SecretRegistry } from './redaction.js';

/** Collects the JSON lines a logger writes. */
function capture(secrets?: SecretRegistry, level: 'debug' | 'info' = 'debug') {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (d: Buffer) => chunks.push(d.toString()));
  const logger = createLogger({ component: 'test', level, stream, ...(secrets ? { secrets } : {}) });
  const lines = async () => {
    await new Promise((r) => setImmediate(r));
    return chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  return { logger, lines, raw: () => chunks.join('') };
}

describe('createLogger', () => {
  it('writes JSON lines with level, time, component and msg', async () => {
    const { logger, lines } = capture();
    logger.info('hello', { method: '/kms.API/GetDataKey', durationMs: 1.5 });
    const [line] = await lines();
    assert.equal(line?.level, 'info');
    assert.equal(line?.msg, 'hello');
    assert.equal(line?.component, 'test');
    assert.equal(line?.method, '/kms.API/GetDataKey');
    assert.equal(typeof line?.time, 'string');
    assert.equal(line?.message, undefined);
  });

  it('filters by level', async () => {
    const { logger, lines } = capture(undefined, 'info');
    logger.debug('hidden');
    logger.warn('shown');
    assert.deepEqual((await lines()).map((l) => l.msg), ['shown']);
  });

  it('redacts secret-named fields, bytes and Secret values', async () => {
    const { logger, lines } = capture();
    logger.info('x', {
      masterSecret: 'abc',
      token: 'abcdef.0123456789abcdef',
      salt: 'x',
      nested: { privateKey: 'pem', dataKeyId: 'disk-uuid', stateDiskKey: 'k' },
      raw: Buffer.from('rawbytes'),
      wrapped: new Secret(Buffer.from('zzz')),
    });
    const [line] = await lines();
    assert.equal(line?.masterSecret, REDACTED);
    assert.equal(line?.token, REDACTED);
    assert.equal(line?.salt, REDACTED);
    assert.deepEqual(line?.nested, { privateKey: REDACTED, dataKeyId: 'disk-uuid', stateDiskKey: REDACTED });
    assert.equal(line?.raw, '[bytes:8]');
    assert.equal(line?.wrapped, REDACTED);
  });

  it('scrubs registered secrets in every encoding, even inside messages and errors', async () => {
    const secret = Buffer.from('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff', 'hex');
    const registry = new SecretRegistry();
    registry.register(secret);
    const { logger, raw } = capture(registry);
    logger.info(`hex ${secret.toString('hex')}`);
    logger.info('b64', { note: `value=${secret.toString('base64')}` });
    logger.error('failed', { err: new Error(`bad key ${secret.toString('base64url')}`) });
    logger.warn('upper', { list: [secret.toString('hex').toUpperCase()] });
    await new Promise((r) => setImmediate(r));
    const out = raw();
    for (const form of [secret.toString('hex'), secret.toString('base64'), secret.toString('base64url'), secret.toString('hex').toUpperCase()]) {
      assert.ok(!out.includes(form), `log output contains ${form}`);
    }
    assert.equal(out.split(REDACTED).length - 1, 4);
  });

  it('maps -v verbosity like the reference', () => {
    assert.equal(levelFromVerbosity(-2), 'debug');
    assert.equal(levelFromVerbosity(-1), 'debug');
    assert.equal(levelFromVerbosity(0), 'info');
    assert.equal(levelFromVerbosity(1), 'warn');
    assert.equal(levelFromVerbosity(2), 'error');
  });
});

describe('SecretRegistry', () => {
  it('ignores values too short to scrub safely', () => {
    const r = new SecretRegistry();
    r.register(Buffer.from('abc'));
    assert.equal(r.size, 0);
    assert.equal(r.scrub('abc'), 'abc');
  });
});
