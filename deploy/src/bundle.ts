/**
 * Bundles one app (`apps/<app>/src/main.ts`) into a single ESM file `dist/<app>/main.mjs` for a
 * container image: all workspace libraries and npm dependencies inlined, Node built-ins external.
 *
 * Two runtime needs of CommonJS dependencies are handled here:
 * - `require`/`__dirname`/`__filename` do not exist in ESM; a banner defines them from
 *   `import.meta.url` (grpc-js and protobufjs use `require` for optional modules).
 * - grpc-health-check loads `health/v1/health.proto` from disk at start-up; the bundle carries
 *   the proto compiled to JSON instead, so no file has to sit next to it.
 *
 * A folder bundle is split: modules a program loads with `import()` go to `chunks/`.
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

/** Repository root (deploy/src/ -> ../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Programs that can be bundled: the apps with an `apps/<app>/src/main.ts`. */
export const APPS = ['bootstrapper', 'joinservice', 'keyservice', 'verification-service', 'attestation-monitor'] as const;

/** The entry file of a program and the app folder its dependencies resolve from. */
export function entryPoint(name: string, root = REPO_ROOT): { entry: string; appDir: string } {
  const appDir = join(root, 'apps', name);
  return { entry: join(appDir, 'src', 'main.ts'), appDir };
}

export interface BundleResult {
  app: string;
  outfile: string;
  /** JavaScript bytes of the program: the entry file and its chunks. */
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

/**
 * grpc-health-check loads `health/v1/health.proto` from disk when it is imported. Every bundle
 * gets the proto compiled to protobufjs JSON at bundle time and loads that instead
 * (`@grpc/proto-loader`'s `fromJSON`, same package definition): a single executable has no files
 * next to it, and in a split bundle the module may sit in `chunks/`, away from any copied proto.
 */
const healthProtoPlugin: esbuild.Plugin = {
  name: 'grpc-health-check-proto',
  setup(build) {
    build.onLoad({ filter: /grpc-health-check[\\/]build[\\/]src[\\/]health\.js$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const src = await readFile(args.path, 'utf8');
      const needle = "(0, proto_loader_1.loadSync)('health/v1/health.proto', {";
      if (!src.includes(needle)) throw new Error(`grpc-health-check changed: ${args.path} no longer contains ${needle}`);
      const protobuf = createRequire(args.path)('protobufjs') as { loadSync(file: string): { toJSON(): unknown } };
      const json = JSON.stringify(protobuf.loadSync(join(dirname(args.path), '..', '..', 'proto', 'health', 'v1', 'health.proto')).toJSON());
      return { contents: src.replace(needle, `(0, proto_loader_1.fromJSON)(${json}, {`), loader: 'js' };
    });
  },
};

/**
 * Optional packages the bundled dependencies probe with `require` inside try/catch and that are
 * not installed: ws (`bufferutil`, `utf-8-validate`), node-fetch (`encoding`), the AWS SDK's
 * signers (`@aws-sdk/signature-v4-crt`, `@aws-sdk/signature-v4a`).
 */
export const NOT_INSTALLED_OPTIONAL = ['bufferutil', 'utf-8-validate', 'encoding', '@aws-sdk/signature-v4-crt', '@aws-sdk/signature-v4a'];

/**
 * CommonJS form only: each package of {@link NOT_INSTALLED_OPTIONAL} becomes a module that throws
 * Node's "not found" error. Left as a bare `require`, a single executable would print a warning on
 * every start (its `require` knows only built-in modules) before throwing the same error.
 */
const missingOptionalPlugin: esbuild.Plugin = {
  name: 'missing-optional-modules',
  setup(build) {
    const filter = new RegExp(`^(${NOT_INSTALLED_OPTIONAL.map((m) => m.replace(/[/@.-]/g, '\\$&')).join('|')})$`);
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'missing-optional' }));
    build.onLoad({ filter: /.*/, namespace: 'missing-optional' }, (args) => ({
      contents: `const e = new Error(${JSON.stringify(`Cannot find module '${args.path}'`)}); e.code = 'MODULE_NOT_FOUND'; throw e;`,
      loader: 'js',
    }));
  },
};

/**
 * The CommonJS form's banner: `import.meta.url` (esbuild leaves it empty in CommonJS) becomes the
 * file's URL. Inside a Node single executable application `__filename` is the executable.
 */
const CJS_BANNER = "var __asterismImportMetaUrl = require('node:url').pathToFileURL(typeof __filename === 'string' ? __filename : process.execPath).href;";

/** Options of {@link bundleApp}. */
export interface BundleOptions {
  /** Output root (default `dist/` of the checkout); the bundle goes to `<outRoot>/<app>/`. */
  outRoot?: string;
  root?: string;
  /**
   * `esm` (default): `main.mjs`, what the images run. `cjs`: `main.cjs` with every import inlined
   * and no source map, what a Node single executable application embeds (it runs one CommonJS
   * script and can `require` only Node's built-in modules; docs/adr/0032).
   */
  format?: 'esm' | 'cjs';
  /**
   * One file and nothing next to it (implied by `cjs`): no source map, no chunks (a CLI bundle
   * that can be moved anywhere).
   */
  singleFile?: boolean;
  /** esbuild `define`s (identifier -> JSON text), e.g. build facts stamped into the CLI. */
  define?: Record<string, string>;
  /**
   * Another entry point than the app's (absolute `file`, dependencies resolved from the package in
   * `packageDir`): the local cluster bundles its simulated node this way.
   */
  entry?: { file: string; packageDir: string };
}

/**
 * esbuild writes a chunk for every `import()` it scanned, also where tree shaking removed the
 * import (a library's AWS client that a program never constructs). Chunks no import path from the
 * entry reaches are deleted, with their source maps and licence files, so an image carries only
 * code its program can load.
 */
function pruneUnreachableChunks(meta: esbuild.Metafile, root: string, outfile: string): void {
  const key = (file: string) => resolve(root, file);
  const outputs = new Map(Object.entries(meta.outputs).map(([file, o]) => [key(file), o]));
  const reached = new Set<string>();
  const pending = [resolve(outfile)];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    for (const i of outputs.get(file)?.imports ?? []) if (!i.external) pending.push(key(i.path));
  }
  for (const file of outputs.keys()) {
    if (!file.endsWith('.mjs') || reached.has(file)) continue;
    for (const f of [file, `${file}.map`, `${file}.LEGAL.txt`]) rmSync(f, { force: true });
  }
}

/** Bytes of JavaScript in a bundle: the entry file and, for a split bundle, its chunks. */
function programBytes(outfile: string): number {
  const chunks = join(dirname(outfile), 'chunks');
  const chunkFiles = existsSync(chunks) ? readdirSync(chunks).filter((f) => f.endsWith('.mjs')) : [];
  return chunkFiles.reduce((sum, f) => sum + statSync(join(chunks, f)).size, statSync(outfile).size);
}

/** Bundles a program (`apps/<app>/src/main.ts`, or `opts.entry`) into `<outRoot>/<app>/main.mjs` (or `main.cjs`). */
export async function bundleApp(app: string, opts: BundleOptions = {}): Promise<BundleResult> {
  const root = opts.root ?? REPO_ROOT;
  const { entry } = opts.entry ? { entry: opts.entry.file } : entryPoint(app, root);
  if (!existsSync(entry)) throw new Error(`cannot bundle ${app}: ${entry} does not exist`);
  const outDir = join(opts.outRoot ?? join(root, 'dist'), app);
  const cjs = opts.format === 'cjs';
  const single = cjs || opts.singleFile === true;
  const outfile = join(outDir, cjs ? 'main.cjs' : 'main.mjs');
  const started = Date.now();
  // A folder bundle splits: what a program loads with `import()` (the Kubernetes client on the
  // init path, the AWS SDK on AWS nodes) goes to chunks/ and is parsed only when loaded. On a node
  // VM, parsing the whole bundle was most of Node's start (docs/protocol/node-image.md "Boot time").
  const split = !single;
  // Chunk names carry content hashes: without this, every earlier build's chunks stayed beside
  // the new ones (and went into the node image, changing its input key).
  for (const stale of ['chunks', `${outfile}`, `${outfile}.map`, `${outfile}.LEGAL.txt`]) rmSync(resolve(outDir, stale), { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: split ? { main: entry } : [entry],
    ...(split ? { outdir: outDir, splitting: true, chunkNames: 'chunks/[name]-[hash]', outExtension: { '.js': '.mjs' } } : { outfile }),
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: cjs ? 'cjs' : 'esm',
    target: 'node20',
    sourcemap: single ? false : 'linked',
    legalComments: 'linked',
    banner: { js: cjs ? CJS_BANNER : BANNER },
    define: { ...(cjs ? { 'import.meta.url': '__asterismImportMetaUrl' } : {}), ...opts.define },
    // The workspace packages export TypeScript sources; esbuild compiles them on the fly.
    conditions: ['node', 'import', 'default'],
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    plugins: cjs ? [healthProtoPlugin, missingOptionalPlugin] : [healthProtoPlugin],
    metafile: split,
  });
  if (result.metafile) pruneUnreachableChunks(result.metafile, root, outfile);
  return { app, outfile, bytes: programBytes(outfile), ms: Date.now() - started };
}
