#!/usr/bin/env bash
# Builds the real Kubernetes binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
# kubeadm, kubelet, kube-proxy) and etcd from the Go modules pinned in tools/k8s-testenv/go, into a cache folder.
# Idempotent: a stamp (go.sum hash + Go version) skips the build when nothing changed.
#   K8S_TESTENV_CACHE  cache root (default ~/.cache/asterism/k8s-testenv, outside the checkout so
#                      fresh clones on the same machine reuse it)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
version=v1.34.4
cache=${K8S_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/asterism/k8s-testenv}
bin=$cache/$version/bin
say() { printf '[k8s-testenv] %s\n' "$*"; }

if ! command -v go >/dev/null 2>&1; then
  say "ERROR: Go is not installed; it is needed to build kube-apiserver and friends (apt-get install golang, or a Go toolchain on PATH)"
  exit 1
fi
stamp="$(sha256sum "$here/go/go.sum" | cut -d' ' -f1) $(go env GOVERSION)"
if [ -f "$bin/.stamp" ] && [ "$(cat "$bin/.stamp")" = "$stamp" ] \
  && [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-controller-manager" ] && [ -x "$bin/kubeadm" ] && [ -x "$bin/etcd" ] \
  && [ -x "$bin/kubelet" ] && [ -x "$bin/kube-scheduler" ] && [ -x "$bin/kube-proxy" ]; then
  say "binaries up to date in $bin"
  exit 0
fi
mkdir -p "$bin"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=34 -X $pkg.gitTreeState=clean"
done
cd "$here/go"
say "downloading Go modules (first run: a few hundred MB)..."
start=$SECONDS
go mod download
say "modules ready in $((SECONDS - start))s"
say "building kube-apiserver, kube-controller-manager, kube-scheduler, kubeadm, kubelet, kube-proxy and etcd $version (first build takes several minutes on 2 cores)..."
start=$SECONDS
go build -trimpath -ldflags "$ldflags" -o "$bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubeadm \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kube-proxy \
  ./cmd/etcd
echo "$stamp" > "$bin/.stamp"
say "built in $((SECONDS - start))s into $bin"
"$bin/kube-apiserver" --version
