#!/usr/bin/env node
// `asterism` through npm's bin link (node_modules/.bin/asterism of this checkout): the single-file bundle
// apps/cli/dist/asterism.mjs when it was built (`bash tools/scripts/release.sh --cli-only`), else
// the TypeScript sources through tsx. The bundle is self-contained: it runs on any Node 20 without
// node_modules. Without Node, use the executable (dist/asterism, docs/adr/0032).
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/asterism.mjs', import.meta.url);
if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/main.ts', import.meta.url).href);
}
