/** A variant added to the table as one descriptor module reaches the bootstrapper's flags, issuer and platform without a bootstrapper change. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerVariant, Variant } from '@asterism/attestation';
import { secondDummyVariant } from '@asterism/attestation/testing';
import { issuerFor, nodePlatformFor } from '@asterism/node-platform';
import { parseFlags } from './flags.js';

describe('the bootstrapper with a variant registered in the table (second-dummy, test-only)', () => {
  let unregister: () => void;
  before(() => {
    unregister = registerVariant(secondDummyVariant);
  });
  after(() => unregister());

  it('issues its documents through issuerFor', async () => {
    const issuer = issuerFor(Variant.fromString('second-dummy'), () => Promise.reject(new Error('no TPM in unit tests')));
    assert.equal(issuer.variant.oid, '1.3.9900.99.1');
    assert.match(Buffer.from(await issuer.issue(Buffer.from('u'), Buffer.alloc(32))).toString(), /"Variant":"second-dummy"/);
  });

  it('--attestation-variant accepts it and the node platform attests it', async () => {
    const config = parseFlags(['--attestation-variant', 'second-dummy', '--state-root', '/', '--tpm', 'unix:/nonexistent'], {})!;
    const platform = nodePlatformFor(config, () => undefined);
    assert.equal(platform.issuer.variant.name, 'second-dummy');
    await platform.close();
  });
});
