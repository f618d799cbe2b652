/**
 * The Kubernetes versions this CLI supports: the one source every caller reads them through, so
 * the versions manifest of the Kubernetes components can replace what it reads without touching
 * the callers.
 *
 * Today the source is the version the Kubernetes binaries are built from (`K8S_VERSION` of
 * tools/k8s-testenv, the module the local cluster and the images use). A built CLI cannot read a
 * checkout, so the bundler (tools/release) calls this function at build time and stamps the result
 * into the bundle through esbuild's `define`; from the sources (tsx) it reads the checkout.
 */

/** Set by the bundler (tools/release/src/cli-bundle.ts); absent when running from the sources. */
declare const __ASTERISM_KUBERNETES_VERSIONS__: readonly string[] | undefined;

/** Where the pinned version lives, relative to this file (apps/cli/src/version -> tools/k8s-testenv). */
const SOURCE = '../../../../tools/k8s-testenv/src/binaries.ts';

/** Supported Kubernetes versions (`v1.34.4` form), newest first. */
export async function supportedKubernetesVersions(): Promise<string[]> {
  if (typeof __ASTERISM_KUBERNETES_VERSIONS__ !== 'undefined') return [...__ASTERISM_KUBERNETES_VERSIONS__];
  // A computed specifier: the bundle never takes this branch and must not pull the tool in.
  const source = new URL(SOURCE, import.meta.url).href;
  const mod = (await import(source)) as { K8S_VERSION?: unknown };
  if (typeof mod.K8S_VERSION !== 'string' || !/^v\d+\.\d+\.\d+$/.test(mod.K8S_VERSION)) throw new Error(`no Kubernetes version in ${SOURCE}`);
  return [mod.K8S_VERSION];
}
