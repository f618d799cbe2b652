#!/usr/bin/env bash
# Builds the real Kubernetes binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
# kubeadm, kubelet, kube-proxy, kubectl), etcd and etcdctl from the Go modules pinned in tools/k8s-testenv/go,
# plus Kubernetes' own pause program (C, from the same module), into a cache folder. Binaries are
# static (CGO off), so container images need nothing but the binary.
# Idempotent: a stamp (go.sum hash + Go version) skips the build when nothing changed.
# Usage: build.sh [VERSION]  (default v1.34.4; supported: the versions in the table below, each with
# its own Go module folder, docs/protocol/components.md)
#   K8S_TESTENV_CACHE  cache root (default ~/.cache/asterism/k8s-testenv, outside the checkout so
#                      fresh clones on the same machine reuse it)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
version=${1:-v1.34.4}
# Version -> the Go module folder pinning it.
case "$version" in
  v1.34.4) module=go ;;
  v1.35.4) module=go-v1.35 ;;
  *) printf '[k8s-testenv] ERROR: unsupported Kubernetes version %s (supported: v1.34.4, v1.35.4)\n' "$version" >&2; exit 2 ;;
esac
minor=$(echo "$version" | cut -d. -f2)
# The folder names the build recipe too (static binaries + etcdctl + pause): checkouts with an older
# recipe keep their own folder instead of rebuilding over this one. Keep in sync with src/binaries.ts.
build=$version-static
cache=${K8S_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/asterism/k8s-testenv}
bin=$cache/$build/bin
say() { printf '[k8s-testenv] %s\n' "$*"; }

if ! command -v go >/dev/null 2>&1; then
  say "ERROR: Go is not installed; it is needed to build kube-apiserver and friends (apt-get install golang, or a Go toolchain on PATH)"
  exit 1
fi
stamp="$(sha256sum "$here/$module/go.sum" | cut -d' ' -f1) $(go env GOVERSION) static"
if [ -f "$bin/.stamp" ] && [ "$(cat "$bin/.stamp")" = "$stamp" ] \
  && [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-controller-manager" ] && [ -x "$bin/kubeadm" ] && [ -x "$bin/etcd" ] \
  && [ -x "$bin/kubelet" ] && [ -x "$bin/kube-scheduler" ] && [ -x "$bin/kube-proxy" ] && [ -x "$bin/etcdctl" ] && [ -x "$bin/pause" ] && [ -x "$bin/kubectl" ]; then
  say "binaries up to date in $bin"
  exit 0
fi
mkdir -p "$bin"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
cd "$here/$module"
say "downloading Go modules (first run: a few hundred MB)..."
start=$SECONDS
go mod download
say "modules ready in $((SECONDS - start))s"
say "building kube-apiserver, kube-controller-manager, kube-scheduler, kubeadm, kubelet, kube-proxy, etcd and etcdctl $version (first build takes several minutes on 2 cores)..."
start=$SECONDS
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubeadm \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kube-proxy \
  k8s.io/kubernetes/cmd/kubectl \
  ./cmd/etcd \
  ./cmd/etcdctl
# The sandbox ("pause") container of every pod: Kubernetes' own C program from the pinned module.
pause_src="$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
pause_version=$(sed -n 's/^[[:space:]]*PauseVersion = "\(.*\)"/\1/p' "$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)/cmd/kubeadm/app/constants/constants.go")
command -v gcc >/dev/null || { say "ERROR: gcc is needed to build the pause program (apt-get install gcc libc6-dev)"; exit 1; }
gcc -Os -static -Wall -Werror -DVERSION="v$pause_version-asterism" -o "$bin/pause" "$pause_src"
strip "$bin/pause"
echo "$stamp" > "$bin/.stamp"
say "built in $((SECONDS - start))s into $bin"
"$bin/kube-apiserver" --version
