#!/usr/bin/env bash
# Builds the node tools that do not depend on the Kubernetes version, from the Go module pinned in
# tools/k8s-testenv/go-node-tools: crictl and the CNI plugins bridge, host-local, loopback and
# portmap. Static (CGO off), -trimpath, no VCS stamp: the same inputs give the same bytes, so the
# hashes in libs/versions hold on every machine with the same Go version (docs/protocol/components.md).
# Idempotent: a stamp (go.sum hash + Go version) skips the build when nothing changed.
#   K8S_TESTENV_CACHE  cache root (default ~/.cache/asterism/k8s-testenv)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${K8S_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/asterism/k8s-testenv}
bin=$cache/node-tools/bin
say() { printf '[k8s-testenv] %s\n' "$*"; }
command -v go >/dev/null 2>&1 || { say "ERROR: Go is not installed (apt-get install golang, or a Go toolchain on PATH)"; exit 1; }
stamp="$(sha256sum "$here/go-node-tools/go.sum" | cut -d' ' -f1) $(go env GOVERSION) static"
tools="crictl bridge host-local loopback portmap"
ok=1
for t in $tools; do [ -x "$bin/$t" ] || ok=0; done
if [ "$ok" = 1 ] && [ -f "$bin/.stamp" ] && [ "$(cat "$bin/.stamp")" = "$stamp" ]; then
  say "node tools up to date in $bin"
  exit 0
fi
mkdir -p "$bin"
cd "$here/go-node-tools"
start=$SECONDS
go mod download
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/" \
  sigs.k8s.io/cri-tools/cmd/crictl \
  github.com/containernetworking/plugins/plugins/main/bridge \
  github.com/containernetworking/plugins/plugins/ipam/host-local \
  github.com/containernetworking/plugins/plugins/main/loopback \
  github.com/containernetworking/plugins/plugins/meta/portmap
echo "$stamp" > "$bin/.stamp"
say "node tools built in $((SECONDS - start))s into $bin"
