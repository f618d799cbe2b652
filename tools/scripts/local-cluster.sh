#!/usr/bin/env bash
# The main job in one command: set up this machine (apt packages, npm dependencies, Go-built
# Kubernetes binaries, helm) if needed, then run the local cluster tool.
#   bash tools/scripts/local-cluster.sh            # = up (1 control plane + 2 workers)
#   bash tools/scripts/local-cluster.sh up --workers 4
#   bash tools/scripts/local-cluster.sh status | down
set -euo pipefail
cd "$(dirname "$0")/../.."
cmd=${1:-up}
[ $# -gt 0 ] && shift
if [ "$cmd" = up ]; then
  echo "[local-cluster] setting up this machine (idempotent; the first run builds Kubernetes and takes a few minutes)"
  bash tools/scripts/setup.sh
fi
exec node --import tsx tools/local-cluster/src/main.ts "$cmd" "$@"
