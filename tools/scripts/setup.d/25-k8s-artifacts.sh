#!/usr/bin/env bash
# Packs the Kubernetes components real local nodes install (docs/protocol/components.md) for every
# version of the checked-in manifest (v1.34.4's binaries are built by 20-k8s-testenv.sh; each further
# version is a full Kubernetes build, ~4-5 min cold on 2 quiet cores, cached like the first; crictl
# and the CNI plugins a few minutes cold). Every version is built here, not on demand, because the
# default (newest) version is what the local cluster and its tests start. ASTERISM_K8S_VERSIONS
# narrows the list (e.g. "v1.34.4" on a machine that only needs the pinned one). Then checks the
# artifacts against the manifest.
set -euo pipefail
cd "$(dirname "$0")/../../.."
versions=${ASTERISM_K8S_VERSIONS:-$(grep -o '"kubernetesVersion": "v[0-9.]*"' libs/versions/src/manifest.generated.ts | grep -o 'v[0-9.]*' | sort -uV | tr '\n' ' ')}
for v in $versions; do
  bash tools/k8s-testenv/scripts/pack.sh "$v" | tail -n 8
done
# shellcheck disable=SC2086
npx tsx tools/k8s-testenv/src/versions-manifest-cli.ts check $versions
