/**
 * Bundles one app (`apps/<app>/src/main.ts`) into a single ESM file `dist/<app>/main.mjs` for a
 * container image: all workspace libraries and npm dependencies inlined, Node built-ins external.
 *
 * Two runtime needs of CommonJS dependencies are handled here:
 * - `require`/`__dirname`/`__filename` do not exist in ESM; a banner defines them from
 *   `import.meta.url` (grpc-js and protobufjs use `require` for optional modules).
 * - grpc-health-check loads `health/v1/health.proto` from disk at start-up; the proto is copied
 *   next to the bundle (`dist/<app>/proto/health/v1/health.proto`) and the include path is
 *   pointed there.
 */
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

/** Repository root (deploy/src/ -> ../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Programs that can be bundled: the apps with an `apps/<app>/src/main.ts`, and the extra entry points below. */
export const APPS = ['bootstrapper', 'joinservice', 'keyservice', 'verification-service'] as const;

/**
 * Programs that are a second entry point of an app rather than an app of their own:
 * `verification-service` is the bootstrapper's verification service alone, run by the chart's
 * DaemonSet on every node (docs/adr/0028); it reuses the bootstrapper's node platform.
 */
export const EXTRA_ENTRY_POINTS: Readonly<Record<string, { app: string; entry: string }>> = {
  'verification-service': { app: 'bootstrapper', entry: 'src/verify/main.ts' },
};

/** The entry file of a program and the app folder its dependencies resolve from. */
export function entryPoint(name: string, root = REPO_ROOT): { entry: string; appDir: string } {
  const extra = EXTRA_ENTRY_POINTS[name];
  const appDir = join(root, 'apps', extra?.app ?? name);
  return { entry: join(appDir, extra?.entry ?? join('src', 'main.ts')), appDir };
}

export interface BundleResult {
  app: string;
  outfile: string;
  bytes: number;
  ms: number;
}

const BANNER = [
  "import { createRequire as __asterismCreateRequire } from 'node:module';",
  "import { fileURLToPath as __asterismFileUrlToPath } from 'node:url';",
  "import { dirname as __asterismDirname } from 'node:path';",
  'const require = __asterismCreateRequire(import.meta.url);',
  'const __filename = __asterismFileUrlToPath(import.meta.url);',
  'const __dirname = __asterismDirname(__filename);',
].join('\n');

/** Rewrites grpc-health-check's proto include dir to `<bundle dir>/proto`. */
const healthProtoPlugin: esbuild.Plugin = {
  name: 'grpc-health-check-proto',
  setup(build) {
    build.onLoad({ filter: /grpc-health-check[\\/]build[\\/]src[\\/]health\.js$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const src = await readFile(args.path, 'utf8');
      const needle = 'includeDirs: [`${__dirname}/../../proto`]';
      if (!src.includes(needle)) throw new Error(`grpc-health-check changed: ${args.path} no longer contains ${needle}`);
      return { contents: src.replace(needle, "includeDirs: [require('node:path').join(__dirname, 'proto')]"), loader: 'js' };
    });
  },
};

/** Bundles a program (`apps/<app>/src/main.ts` or an extra entry point) into `<outRoot>/<app>/main.mjs`. */
export async function bundleApp(app: string, opts: { outRoot?: string; root?: string } = {}): Promise<BundleResult> {
  const root = opts.root ?? REPO_ROOT;
  const { entry, appDir } = entryPoint(app, root);
  if (!existsSync(entry)) throw new Error(`cannot bundle ${app}: ${entry} does not exist`);
  const outDir = join(opts.outRoot ?? join(root, 'dist'), app);
  const outfile = join(outDir, 'main.mjs');
  const started = Date.now();
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    legalComments: 'linked',
    banner: { js: BANNER },
    // The workspace packages export TypeScript sources; esbuild compiles them on the fly.
    conditions: ['node', 'import', 'default'],
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    plugins: [healthProtoPlugin],
  });
  const req = createRequire(join(appDir, 'package.json'));
  let healthPkg: string | undefined;
  try {
    healthPkg = dirname(req.resolve('grpc-health-check/package.json'));
  } catch {
    healthPkg = undefined;
  }
  if (healthPkg) {
    const protoOut = join(outDir, 'proto', 'health', 'v1');
    mkdirSync(protoOut, { recursive: true });
    copyFileSync(join(healthPkg, 'proto', 'health', 'v1', 'health.proto'), join(protoOut, 'health.proto'));
  }
  return { app, outfile, bytes: statSync(outfile).size, ms: Date.now() - started };
}
