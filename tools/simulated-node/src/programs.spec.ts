import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LocalProgramsError, programCommand, readLocalPrograms, WORKSPACE_ROOT } from './programs.js';

const dir = mkdtempSync(join(tmpdir(), 'programs-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('local programs (--local-apps)', () => {
  it('reads bundles and Node flags; programCommand runs the bundle with its flags', () => {
    const programs = readLocalPrograms(
      file('ok.json', JSON.stringify({ keyservice: { entry: '/c/apps/keyservice/main.mjs', nodeFlags: ['--max-old-space-size=48'] }, 'verification-service': { entry: '/c/apps/verification-service/main.mjs', nodeFlags: [] } })),
    );
    assert.deepEqual(programCommand('keyservice', programs), { binary: process.execPath, args: ['--max-old-space-size=48', '/c/apps/keyservice/main.mjs'] });
    assert.deepEqual(programCommand('verification-service', programs).args, ['/c/apps/verification-service/main.mjs']);
    const fromSources = programCommand('joinservice', programs).args;
    assert.equal(fromSources[0], '--import');
    assert.equal(fromSources[2], join(WORKSPACE_ROOT, 'apps/joinservice/src/main.ts'), 'a program the file does not name runs from the sources');
  });

  it('without the file every program runs from its TypeScript sources through tsx', () => {
    for (const [name, entry] of [
      ['keyservice', 'apps/keyservice/src/main.ts'],
      ['joinservice', 'apps/joinservice/src/main.ts'],
      ['verification-service', 'apps/verification-service/src/main.ts'],
    ] as const) {
      const { binary, args } = programCommand(name);
      assert.equal(binary, process.execPath);
      assert.match(args[1]!, /tsx/);
      assert.equal(args[2], join(WORKSPACE_ROOT, entry));
    }
  });

  const bad: Array<[string, string, RegExp]> = [
    ['not JSON', '{', /JSON/],
    ['a list', '[]', /not a JSON object/],
    ['an unknown program', JSON.stringify({ bootstrapper: { entry: '/b.mjs', nodeFlags: [] } }), /unknown program "bootstrapper"/],
    ['a relative entry', JSON.stringify({ keyservice: { entry: 'main.mjs', nodeFlags: [] } }), /keyservice.entry must be an absolute path/],
    ['flags that are not --flags', JSON.stringify({ joinservice: { entry: '/j.mjs', nodeFlags: ['-e', 'x'] } }), /joinservice.nodeFlags must be a list of --flags/],
  ];
  for (const [name, text, message] of bad) {
    it(`refuses ${name} with LOCAL_APPS_INVALID naming the file`, () => {
      const path = file(`${name.replaceAll(' ', '-')}.json`, text);
      assert.throws(() => readLocalPrograms(path), (e: unknown) => e instanceof LocalProgramsError && e.code === 'LOCAL_APPS_INVALID' && e.message.includes(path) && message.test(e.message));
    });
  }
  it('refuses a missing file', () => assert.throws(() => readLocalPrograms(join(dir, 'missing.json')), (e: unknown) => e instanceof LocalProgramsError && /ENOENT/.test(e.message)));
});
