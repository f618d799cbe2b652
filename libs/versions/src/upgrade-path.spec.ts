import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkUpgradePath, parseKubeVersion, upgradeTargets, UpgradePathError } from './upgrade-path.js';

const SUPPORTED = ['v1.33.9', 'v1.34.4', 'v1.34.6', 'v1.35.4', 'v1.36.1', 'v2.0.0'];
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof UpgradePathError, String(err));
    return err.code;
  }
  assert.fail('expected a refusal');
};

describe('upgrade skew policy', () => {
  it('parses with or without the v prefix and refuses anything else', () => {
    assert.deepEqual(parseKubeVersion('1.35.4'), { major: 1, minor: 35, patch: 4, text: 'v1.35.4' });
    for (const bad of ['v1.35', 'latest', 'v1.35.4-rc.1', '', 'v1.35.4 extra']) assert.equal(refusal(() => parseKubeVersion(bad)), 'VERSION_MALFORMED', bad);
  });

  it('allows a patch upgrade and the next minor', () => {
    assert.equal(checkUpgradePath('v1.34.4', 'v1.34.6', SUPPORTED).text, 'v1.34.6');
    assert.equal(checkUpgradePath('v1.34.4', 'v1.35.4', SUPPORTED).text, 'v1.35.4');
  });

  it('refuses the same version, a downgrade, a skipped minor, a major jump and an unsupported version, each by its code', () => {
    assert.equal(refusal(() => checkUpgradePath('v1.34.4', 'v1.34.4', SUPPORTED)), 'UPGRADE_SAME_VERSION');
    assert.equal(refusal(() => checkUpgradePath('v1.35.4', 'v1.34.6', SUPPORTED)), 'UPGRADE_DOWNGRADE');
    assert.equal(refusal(() => checkUpgradePath('v1.34.4', 'v1.36.1', SUPPORTED)), 'UPGRADE_SKIPS_MINOR');
    assert.equal(refusal(() => checkUpgradePath('v1.36.1', 'v2.0.0', SUPPORTED)), 'UPGRADE_SKIPS_MINOR');
    assert.equal(refusal(() => checkUpgradePath('v1.34.4', 'v1.34.5', SUPPORTED)), 'UPGRADE_NOT_SUPPORTED');
  });

  it('names the next minor in the skipped-minor message', () => {
    assert.throws(() => checkUpgradePath('v1.34.4', 'v1.36.1', SUPPORTED), /one minor at a time \(next: v1\.35\.x\)/);
  });

  it('lists exactly the one-step targets, oldest first', () => {
    assert.deepEqual(upgradeTargets('v1.34.4', SUPPORTED), ['v1.34.6', 'v1.35.4']);
    assert.deepEqual(upgradeTargets('v1.36.1', SUPPORTED), []);
    assert.deepEqual(upgradeTargets('v1.33.9', SUPPORTED), ['v1.34.4', 'v1.34.6']);
  });
});
