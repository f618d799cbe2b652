#!/usr/bin/env bash
# Packs the Kubernetes components real local nodes install (docs/protocol/components.md): the
# pinned version always (its binaries are built by 20-k8s-testenv.sh; this adds crictl and the CNI
# plugins, a few minutes cold), further versions only when asked for, since each is a full
# Kubernetes build (ASTERISM_K8S_EXTRA_VERSIONS="v1.35.4"; `up` of the local cluster also builds
# a missing version on demand). Then checks the artifacts against the checked-in manifest.
set -euo pipefail
cd "$(dirname "$0")/../../.."
for v in v1.34.4 ${ASTERISM_K8S_EXTRA_VERSIONS:-}; do
  bash tools/k8s-testenv/scripts/pack.sh "$v" | tail -n 8
done
npx tsx tools/k8s-testenv/src/versions-manifest-cli.ts check v1.34.4 ${ASTERISM_K8S_EXTRA_VERSIONS:-}
