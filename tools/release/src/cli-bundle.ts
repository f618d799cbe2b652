/**
 * The CLI as one file: deploy's esbuild bundler on apps/cli/src/main.ts, with the build facts
 * `asterism version` prints stamped in (commit, supported Kubernetes versions), so the bundle and
 * the executable need no checkout. `esm` is the `main.mjs` a Node user runs (`bin` of apps/cli);
 * `cjs` is what the single executable embeds (docs/adr/0032).
 *
 * The facts come from the CLI itself: `asterism version -o json` run from the sources, so the
 * CLI's own functions (apps/cli/src/version) stay their one source.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bundleApp, REPO_ROOT, type BundleResult } from '@asterism/deploy';

const run = promisify(execFile);

/** Facts stamped into a CLI bundle. */
export interface CliBuildFacts {
  version: string;
  /** 40 hex digits, `-dirty` with uncommitted changes. */
  commit: string;
  kubernetesVersions: string[];
  attestationVariants: string[];
}

/** The facts of the checkout at `root`, from `asterism version -o json` run from its sources. */
export async function cliBuildFacts(root = REPO_ROOT): Promise<CliBuildFacts> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(root, 'apps', 'cli', 'src', 'main.ts'), 'version', '-o', 'json'], { cwd: root, timeout: 120_000 });
  const r = JSON.parse(stdout) as Partial<CliBuildFacts> & { build?: string };
  if (r.build !== 'source' || typeof r.version !== 'string' || typeof r.commit !== 'string' || !Array.isArray(r.kubernetesVersions) || !Array.isArray(r.attestationVariants)) {
    throw new Error(`unexpected answer of asterism version -o json: ${stdout.slice(0, 500)}`);
  }
  return { version: r.version, commit: r.commit, kubernetesVersions: r.kubernetesVersions, attestationVariants: r.attestationVariants };
}

/** Bundles the CLI into one file, `<outRoot>/cli/main.mjs` or `main.cjs`, with `facts` stamped in. */
export async function bundleCli(outRoot: string, format: 'esm' | 'cjs', facts: CliBuildFacts): Promise<BundleResult> {
  return bundleApp('cli', {
    outRoot,
    format,
    singleFile: true,
    define: {
      __ASTERISM_BUILD_COMMIT__: JSON.stringify(facts.commit),
      __ASTERISM_KUBERNETES_VERSIONS__: JSON.stringify(facts.kubernetesVersions),
    },
  });
}
