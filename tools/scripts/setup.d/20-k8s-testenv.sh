#!/usr/bin/env bash
# Builds (or reuses) the Kubernetes binaries for integration tests and the local cluster.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash tools/k8s-testenv/scripts/build.sh
