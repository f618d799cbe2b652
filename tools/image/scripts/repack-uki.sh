#!/usr/bin/env bash
# Makes a variant of a built node image with a changed boot chain, for the tests that show a
# change moves both the prediction and the booted PCRs: the UKI on a copy of the image's ESP is
# rebuilt with more kernel command-line arguments and/or a kernel with appended bytes.
# Usage: repack-uki.sh <image> <out-image> [--cmdline-extra "<args>"] [--kernel-pad <bytes>]
set -euo pipefail
in=$1 out=$2; shift 2
extra="" pad=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cmdline-extra) extra=$2; shift 2 ;;
    --kernel-pad) pad=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MTOOLS_SKIP_CHECK=1
esp_offset=$(( $(sfdisk --json "$in" | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitiontable"]["partitions"]; print([x for x in p if x["type"].upper()=="C12A7328-F81F-11D2-BA4B-00A0C93EC93B"][0]["start"])') * 512 ))
cp --reflink=auto "$in" "$out"
mcopy -n -i "$out@@$esp_offset" ::/EFI/BOOT/BOOTX64.EFI "$work/uki.efi"
objcopy -O binary --only-section=.cmdline "$work/uki.efi" "$work/cmdline"
objcopy -O binary --only-section=.linux "$work/uki.efi" "$work/linux"
printf '%s%s' "$(tr -d '\0' < "$work/cmdline")" "${extra:+ $extra}" > "$work/cmdline.new"
cp "$work/linux" "$work/linux.new"
[ "$pad" -gt 0 ] && head -c "$pad" /dev/zero >> "$work/linux.new"
objcopy --update-section .cmdline="$work/cmdline.new" --update-section .linux="$work/linux.new" "$work/uki.efi" "$work/uki.new.efi"
mcopy -o -m -i "$out@@$esp_offset" "$work/uki.new.efi" ::/EFI/BOOT/BOOTX64.EFI
