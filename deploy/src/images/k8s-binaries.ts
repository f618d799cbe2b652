/**
 * Where the image builder finds the static Kubernetes binaries when `--k8s-bin-dir` is not given:
 * deploy's own setting (docs/adr/0018-local-container-images.md), read from the environment and
 * this file, not from another project's code. `images-config.spec.ts` checks that it names the
 * folder the build tool (tools/k8s-testenv) fills.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Kubernetes version the local images are built from by default (the test environment's pinned build). */
export const IMAGES_KUBERNETES_VERSION = 'v1.34.4';

/**
 * `ASTERISM_K8S_BIN_DIR`, else `K8S_TESTENV_BIN` (what setup exports for the pinned build), else
 * `<K8S_TESTENV_CACHE | $XDG_CACHE_HOME/asterism/k8s-testenv>/<version>-static/bin`.
 */
export function defaultK8sBinDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ASTERISM_K8S_BIN_DIR) return env.ASTERISM_K8S_BIN_DIR;
  if (env.K8S_TESTENV_BIN) return env.K8S_TESTENV_BIN;
  const cache = env.K8S_TESTENV_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'asterism', 'k8s-testenv');
  return join(cache, `${IMAGES_KUBERNETES_VERSION}-static`, 'bin');
}
