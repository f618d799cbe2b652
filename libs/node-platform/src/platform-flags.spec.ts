import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError } from '@asterism/service-runtime';
import { attestationVariant, tpmFlag } from './platform-flags.js';

describe('platform flags', () => {
  it('--attestation-variant: a known variant; missing or unknown is a FlagError', () => {
    assert.equal(attestationVariant('qemu-vtpm').name, 'qemu-vtpm');
    assert.throws(() => attestationVariant(undefined), (err: unknown) => err instanceof FlagError && /attestation variant is required/.test(err.message));
    assert.throws(() => attestationVariant('no-such-variant'), (err: unknown) => err instanceof FlagError && /^attestation variant: /.test(err.message));
  });

  it('--tpm: /dev/tpmrm0 by default, a device path, unix: or tcp:<host>:<port>; anything else is a FlagError', () => {
    assert.equal(tpmFlag(undefined), '/dev/tpmrm0');
    for (const ok of ['/dev/tpm0', 'unix:/run/swtpm.sock', 'tcp:127.0.0.1:2321']) assert.equal(tpmFlag(ok), ok);
    for (const bad of ['tpm0', 'tcp:127.0.0.1', 'unix:', 'http://x']) assert.throws(() => tpmFlag(bad), FlagError, bad);
  });
});
