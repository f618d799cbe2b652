import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { APP_NODE_FLAGS } from './node-flags.js';

describe('APP_NODE_FLAGS', () => {
  for (const [app, flags] of Object.entries(APP_NODE_FLAGS)) {
    it(`${app}: accepted by this Node.js without warnings (a bad flag would stop the image at start-up)`, () => {
      const run = spawnSync(process.execPath, [...flags, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, 'ok');
      assert.equal(run.stderr, '');
    });
  }
});
