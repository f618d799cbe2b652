/**
 * The container files agree with the bundler and the charts (images cannot be built here: no
 * container engine; the bundle itself is tested in bundle.int.spec.ts): multi-stage, the build stage
 * bundles the right app, the runtime stage copies only dist/<app>/, runs `node /app/main.mjs` as a
 * non-root user and exposes the ports the charts use.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { APPS, REPO_ROOT } from './bundle.js';
import { APP_NODE_FLAGS } from './node-flags.js';

const DOCKER = join(REPO_ROOT, 'deploy', 'docker');

function instructions(text: string): Array<[string, string]> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const i = l.indexOf(' ');
      return [l.slice(0, i).toUpperCase(), l.slice(i + 1).trim()] as [string, string];
    });
}

/** The container ports the chart of `app` gives the pod, in the Dockerfile's EXPOSE order. */
function chartPorts(app: string): number[] {
  const chart = app.replaceAll('-', '');
  const v = YAML.parse(readFileSync(join(REPO_ROOT, 'deploy', 'charts', chart, 'values.yaml'), 'utf8')) as Record<string, unknown> & { global: { keyServicePort: number } };
  if (chart === 'joinservice') return [v.joinServicePort as number, v.metricsPort as number];
  if (chart === 'verificationservice') return [v.grpcPort as number, v.httpPort as number];
  if (chart === 'attestationmonitor') return [v.metricsPort as number];
  return [v.global.keyServicePort, v.metricsPort as number];
}

describe('Dockerfiles', () => {
  for (const app of APPS) {
    it(`${app}.Dockerfile: multi-stage, bundles ${app}, non-root runtime with only the bundle`, () => {
      const ins = instructions(readFileSync(join(DOCKER, `${app}.Dockerfile`), 'utf8'));
      const froms = ins.filter(([k]) => k === 'FROM');
      assert.equal(froms.length, 2, 'two stages');
      assert.match(froms[0]![1], / AS build$/);
      const buildRuns = ins.filter(([k]) => k === 'RUN').map(([, v]) => v);
      assert.ok(buildRuns.some((r) => r.includes(`deploy/src/bundle-cli.ts ${app}`) && r.includes(`test -s dist/${app}/main.mjs`)), 'bundles the app');
      const runtime = ins.slice(ins.indexOf(froms[1]!));
      assert.deepEqual(
        runtime.filter(([k]) => k === 'COPY').map(([, v]) => v),
        [`--from=build --chown=0:0 --chmod=0555 /src/dist/${app}/ /app/`],
      );
      assert.equal(runtime.filter(([k]) => k === 'RUN').length, 0, 'nothing runs in the runtime stage');
      const user = runtime.find(([k]) => k === 'USER')?.[1];
      assert.ok(user && /^[1-9]\d*(:\d+)?$/.test(user), `numeric non-root USER, got ${user}`);
      assert.deepEqual(JSON.parse(runtime.find(([k]) => k === 'ENTRYPOINT')![1]), ['node', '--enable-source-maps', ...APP_NODE_FLAGS[app], '/app/main.mjs']);
      const ignore = readFileSync(join(DOCKER, `${app}.Dockerfile.dockerignore`), 'utf8').split('\n');
      assert.ok(ignore.includes('node_modules') && ignore.includes('dist'), 'build context excludes node_modules and dist');
      if (app !== 'bootstrapper') {
        const exposed = runtime.find(([k]) => k === 'EXPOSE')![1].split(/\s+/).map(Number);
        assert.deepEqual(exposed, chartPorts(app), 'EXPOSE matches the chart ports');
      }
    });
  }
});
