/**
 * A variant added to the table as one descriptor module (the test-only second-dummy of
 * @asterism/attestation/testing) reaches every CLI path without a CLI change: the attestation
 * config flags, the validator factory with the sources the descriptor names, `asterism version`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defaultAttestationConfig, registerVariant } from '@asterism/attestation';
import { secondDummyVariant } from '@asterism/attestation/testing';
import { attestationConfig } from '../config/attestation-flags.js';
import { attestationVariants } from '../version/version-cli.js';
import { buildCliValidator } from './cli-validator.js';

describe('the CLI with a variant registered in the table (second-dummy)', () => {
  let unregister: () => void;
  const dir = mkdtempSync(join(tmpdir(), 'cli-variant-table-'));
  before(() => {
    unregister = registerVariant(secondDummyVariant);
  });
  after(() => {
    unregister();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads its attestation config from --variant and --attestation-config', async () => {
    const path = join(dir, 'att.json');
    writeFileSync(path, '{"measurements":{}}');
    const att = await attestationConfig({ variant: 'second-dummy', 'attestation-config': path }, {});
    assert.equal(att.variant, 'second-dummy');
  });

  it('builds its validator (with the ak-ca-issuers source it names) and validates its documents', async () => {
    const v = await buildCliValidator(defaultAttestationConfig('second-dummy'));
    try {
      assert.equal(v.validator.variant.name, 'second-dummy');
      const nonce = Buffer.alloc(32, 4);
      const issuer = secondDummyVariant.issuer!({ openTpm: () => Promise.reject(new Error('unused')), eventLog: async () => Buffer.alloc(0), stateRoot: '/' });
      assert.deepEqual(Buffer.from(await v.validator.validate(await issuer.issue(Buffer.from('u'), nonce), nonce)), Buffer.from('u'));
    } finally {
      await v.close();
    }
  });

  it('asterism version lists it', () => {
    assert.ok(attestationVariants().includes('second-dummy'));
  });
});
