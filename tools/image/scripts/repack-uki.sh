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
for section in osrel cmdline linux initrd; do
  objcopy -O binary --only-section=".$section" "$work/uki.efi" "$work/$section"
done
printf '%s%s' "$(tr -d '\0' < "$work/cmdline")" "${extra:+ $extra}" > "$work/cmdline.new"
[ "$pad" -gt 0 ] && head -c "$pad" /dev/zero >> "$work/linux"
# A new UKI from the stub, as assemble-disk.sh builds it (objcopy --update-section keeps the old
# section size in the PE header, which would cut a longer command line).
objcopy \
  --add-section .osrel="$work/osrel" --change-section-vma .osrel=0x20000 \
  --add-section .cmdline="$work/cmdline.new" --change-section-vma .cmdline=0x30000 \
  --add-section .linux="$work/linux" --change-section-vma .linux=0x2000000 \
  --add-section .initrd="$work/initrd" --change-section-vma .initrd=0x3000000 \
  /usr/lib/systemd/boot/efi/linuxx64.efi.stub "$work/uki.new.efi"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000} bash "$(dirname "$0")/pe-normalize.sh" "$work/uki.new.efi"
mcopy -o -m -i "$out@@$esp_offset" "$work/uki.new.efi" ::/EFI/BOOT/BOOTX64.EFI
