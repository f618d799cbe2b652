#!/usr/bin/env bash
# Stage 1 of the node image: the Debian 12 root filesystem as a tarball, from the packages in
# packages.txt, with mmdebstrap (docs/adr/0033). The downloaded .debs are kept in the cache
# folder and fed back on the next run; the tarball is cached under a key of the package list,
# the apt sources and this script, so a warm build skips this stage.
# Usage: build-rootfs.sh <cache-dir>   (prints the tarball path on stdout)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${1:?usage: build-rootfs.sh <cache-dir>}
sources=${IMAGE_APT_SOURCES:-/etc/apt/sources.list.d/debian.sources}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
mkdir -p "$cache/debs"
packages=$(grep -v '^\s*#' "$here/packages.txt" | grep -v '^\s*$' | sort | paste -sd, -)
key=$( { echo "$packages"; cat "$sources"; cat "$0"; echo "$SOURCE_DATE_EPOCH"; } | sha256sum | cut -c1-16)
tar_out="$cache/rootfs-$key.tar"
if [ -s "$tar_out" ]; then echo "[image] rootfs cached: $tar_out" >&2; echo "$tar_out"; exit 0; fi
start=$SECONDS
echo "[image] mmdebstrap: $packages" >&2
mmdebstrap --mode=root --variant=essential --format=tar \
  --aptopt='APT::Install-Recommends "false"' --aptopt='Acquire::Languages "none"' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --include="$packages" \
  --skip=download/empty --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in '$cache/debs' /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives '$cache/debs'" \
  --customize-hook='chroot "$1" dpkg-query -W -f "\${Package}\t\${Version}\t\${Architecture}\n" > "$1"/usr/share/asterism-packages.tsv' \
  --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/cache/apt/*.bin; rm -rf "$1"/var/lib/apt/lists/*' \
  bookworm "$tar_out.tmp" "$sources" >&2
mv "$tar_out.tmp" "$tar_out"
echo "[image] rootfs built in $((SECONDS - start))s: $tar_out" >&2
echo "$tar_out"
