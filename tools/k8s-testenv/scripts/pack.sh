#!/usr/bin/env bash
# Packs what a node of one Kubernetes version installs into the artifact folder the local artifact
# server serves and the versions manifest hashes (docs/protocol/components.md):
#   <cache>/artifacts/<version>/kubelet, kubeadm, kubectl   the static binaries, as built
#   <cache>/artifacts/<version>/crictl.tar.gz                crictl (extracted into /run/state/bin)
#   <cache>/artifacts/<version>/cni-plugins.tar.gz           bridge, host-local, loopback, portmap
# Archives are deterministic (sorted names, mtime 0, owner 0, gzip without name/time), so the same
# binaries always give the same hashes. Runs build.sh VERSION and build-node-tools.sh first (both
# skip when up to date). Usage: pack.sh VERSION
set -euo pipefail
version=${1:?usage: pack.sh VERSION}
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${K8S_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/asterism/k8s-testenv}
say() { printf '[k8s-testenv] %s\n' "$*"; }
bash "$here/scripts/build.sh" "$version"
bash "$here/scripts/build-node-tools.sh"
bin=$cache/$version-static/bin
tools=$cache/node-tools/bin
out=$cache/artifacts/$version
tmp=$(mktemp -d "$cache/artifacts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# tarball NAME DIR FILES...: a reproducible .tar.gz of FILES (taken from DIR, mode 0755).
tarball() {
  local name=$1 dir=$2
  shift 2
  mkdir -p "$tmp/stage-$name"
  for f in "$@"; do install -m 0755 "$dir/$f" "$tmp/stage-$name/$f"; done
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu -C "$tmp/stage-$name" -cf - "$@" | gzip -n -9 > "$tmp/$name.tar.gz"
}
for b in kubelet kubeadm kubectl; do
  [ -x "$bin/$b" ] || { say "ERROR: $bin/$b missing (build.sh $version builds it)"; exit 1; }
  install -m 0755 "$bin/$b" "$tmp/$b"
done
tarball crictl "$tools" crictl
tarball cni-plugins "$tools" bridge host-local loopback portmap
rm -rf "$tmp"/stage-*
mkdir -p "$cache/artifacts"
rm -rf "$out.old"
[ -d "$out" ] && mv "$out" "$out.old"
mv "$tmp" "$out"
rm -rf "$out.old"
trap - EXIT
say "artifacts of $version in $out:"
(cd "$out" && sha256sum -- *)
