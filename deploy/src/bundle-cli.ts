/**
 * `npx tsx deploy/src/bundle-cli.ts [app...]` — bundles the named programs (default: every app that
 * has an `apps/<app>/src/main.ts`) into
 * `dist/<app>/main.mjs`. Used by the nx `bundle` targets.
 */
import { existsSync } from 'node:fs';
import { APPS, bundleApp, entryPoint } from './bundle.js';

const requested = process.argv.slice(2).filter((a) => a !== '');
const apps = requested.length > 0 ? requested : APPS.filter((a) => existsSync(entryPoint(a).entry));
if (requested.length === 0) {
  const missing = APPS.filter((a) => !apps.includes(a));
  if (missing.length > 0) process.stderr.write(`bundle: no src/main.ts yet for ${missing.join(', ')}; skipped\n`);
}
let failed = false;
for (const app of apps) {
  try {
    const r = await bundleApp(app);
    process.stdout.write(`bundle: ${r.outfile} (${(r.bytes / 1024 / 1024).toFixed(2)} MiB, ${r.ms} ms)\n`);
  } catch (err) {
    failed = true;
    process.stderr.write(`bundle: ${app}: ${(err as Error).message}\n`);
  }
}
process.exit(failed ? 1 : 0);
