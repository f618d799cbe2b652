#!/usr/bin/env bash
# Builds the node image (docs/protocol/node-image.md): rootfs tarball (build-rootfs.sh, cached)
# + this repository's files -> initramfs -> erofs root + dm-verity hash tree -> UKI with the root
# hash on its command line -> ESP -> GPT disk image; then predicts its PCRs.
# Usage: build-image.sh [--out <dir>] [--cache <dir>] [--cmdline-extra "<args>"]
# Needs root (chroot for mkinitramfs). Everything is reproducible from the same inputs:
# SOURCE_DATE_EPOCH fixes every time stamp, UUIDs and the verity salt are derived from content.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
out="$repo/dist/image" cache="${ASTERISM_CACHE:-$HOME/.cache/asterism}/image" extra=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --cmdline-extra) extra=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
export TZ=UTC LC_ALL=C.UTF-8
say() { printf '[image] %s (%ss)\n' "$*" "$((SECONDS - t0))" >&2; }
t0=$SECONDS
mkdir -p "$out" "$cache"
# One build at a time per cache: two (the image tests' and the local cluster's, for instance)
# would write the same rootfs tarball and the same bootstrapper bundle (dist/bootstrapper).
exec 9>"$cache/.build.lock"
flock 9
work=$(mktemp -d /var/tmp/asterism-image.XXXXXX)
trap 'umount -R "$work/root/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
root="$work/root"

rootfs_tar=$(bash "$here/scripts/build-rootfs.sh" "$cache")
say "rootfs: $rootfs_tar"

# The bootstrapper bundle (deploy/ bundler) and the Node runtime of the host (docs/adr/0033).
bundle="$repo/dist/bootstrapper"
(cd "$repo" && npx tsx deploy/src/bundle-cli.ts bootstrapper >&2)

# Skip everything below when no input changed since the image in $out was built.
key=$( {
  echo "rootfs $(basename "$rootfs_tar") sde $SOURCE_DATE_EPOCH extra $extra"
  (cd "$bundle" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
  (cd "$here" && find rootfs scripts packages.txt -type f -print0 | sort -z | xargs -0 sha256sum)
  sha256sum "$(readlink -f "${NODE_BINARY:-/usr/bin/node}")" /usr/lib/systemd/boot/efi/linuxx64.efi.stub
  mkfs.erofs --version 2>&1 | head -1; veritysetup --version; objcopy --version | head -1; sfdisk --version
} | sha256sum | cut -c1-32)
if [ -s "$out/node-image.raw" ] && [ "$(cat "$out/input-key" 2>/dev/null)" = "$key" ]; then
  say "inputs unchanged (key $key): keeping $out/node-image.raw"
  exit 0
fi
rm -f "$out/input-key"
mkdir -p "$root" && tar --numeric-owner -xpf "$rootfs_tar" -C "$root"
install -d "$root/usr/lib/asterism/bootstrapper"
cp -r "$bundle/." "$root/usr/lib/asterism/bootstrapper/"
install -m 0755 "$(readlink -f "${NODE_BINARY:-/usr/bin/node}")" "$root/usr/bin/node"
cp -r "$here/rootfs/." "$root/"
bash "$here/scripts/configure-root.sh" "$root"
say "root configured"

# The initramfs, built in the root (its kernel modules and hooks).
kver=$(ls "$root/lib/modules")
mount -t proc proc "$root/proc"
chroot "$root" mkinitramfs -o "/boot/initrd.img-$kver" "$kver" >&2
umount "$root/proc"
cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/initrd.img"
cp "$root/usr/lib/os-release" "$work/os-release"
cp "$root/usr/share/asterism-packages.tsv" "$out/packages.tsv"
rm -rf "$root/boot/"* "$root/var/cache/"* "$root/var/log/"* "$root/tmp/"*
say "initramfs built ($kver)"

bash "$here/scripts/assemble-disk.sh" "$root" "$work" "$out" "$extra"
say "disk assembled"
node_version=$("$root/usr/bin/node" --version)
node_sha=$(sha256sum "$root/usr/bin/node" | cut -d' ' -f1)
(cd "$repo" && npx tsx tools/image/src/cli.ts predict --image "$out/node-image.raw" --out "$out" \
  --record "kernel=$kver" --record "node=$node_version" --record "nodeSha256=$node_sha" \
  --record "rootfsTar=$(basename "$rootfs_tar")" --record "sourceDateEpoch=$SOURCE_DATE_EPOCH" >&2)
echo "$key" > "$out/input-key"
say "done: $out ($(du -m "$out/node-image.raw" | cut -f1) MiB, input key $key)"
