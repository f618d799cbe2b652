#!/usr/bin/env bash
# Assembles the node image from a configured root and its kernel/initramfs (build-image.sh):
# erofs root -> dm-verity hash tree -> UKI (systemd-stub, root hash on the command line) -> FAT
# ESP with \EFI\BOOT\BOOTX64.EFI -> GPT disk <out>/node-image.raw (docs/protocol/node-image.md).
# Usage: assemble-disk.sh <root> <work> <out> [<extra cmdline>]
set -euo pipefail
root=$1 work=$2 out=$3 extra=${4:-}
sde=${SOURCE_DATE_EPOCH:?}
MiB=$((1024 * 1024))
stub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
# Fixed identifiers (reproducible); the root partitions' UUIDs come from the root hash.
disk_guid=9d1d2b4e-5e3a-4c33-9b4b-6173746572a1
esp_uuid=9d1d2b4e-5e3a-4c33-9b4b-6173746572a2
fs_uuid=9d1d2b4e-5e3a-4c33-9b4b-6173746572a3
esp_volid=41535452
as_uuid() { echo "$1" | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12})$/\1-\2-\3-\4-\5/'; }
mib_up() { echo $(( ($1 + MiB - 1) / MiB )); }

# 1. Root file system: erofs, every time stamp SOURCE_DATE_EPOCH.
mkfs.erofs --quiet -zlz4hc -T"$sde" -U"$fs_uuid" "$work/root.img" "$root" >&2
truncate -s "$(( $(mib_up "$(stat -c %s "$work/root.img")") * MiB ))" "$work/root.img"

# 2. dm-verity hash tree; the salt and UUID are derived from the root image.
content=$(sha256sum "$work/root.img" | cut -d' ' -f1)
veritysetup format --data-block-size=4096 --hash-block-size=4096 --salt="$content" \
  --uuid="$(as_uuid "$(echo "$content" | cut -c1-32)")" "$work/root.img" "$work/verity.img" > "$work/verity.txt"
roothash=$(sed -n 's/^Root hash:[[:space:]]*//p' "$work/verity.txt")
[ ${#roothash} -eq 64 ] || { echo "no root hash from veritysetup" >&2; exit 1; }
truncate -s "$(( $(mib_up "$(stat -c %s "$work/verity.img")") * MiB ))" "$work/verity.img"

# 3. UKI: the stub's sections as systemd 252 documents them (objcopy with fixed VMAs).
cmdline="console=ttyS0,115200 quiet panic=-1 root=/dev/mapper/root rootfstype=erofs ro asterism.roothash=$roothash${extra:+ $extra}"
printf '%s' "$cmdline" > "$work/cmdline.txt"
objcopy \
  --add-section .osrel="$work/os-release" --change-section-vma .osrel=0x20000 \
  --add-section .cmdline="$work/cmdline.txt" --change-section-vma .cmdline=0x30000 \
  --add-section .linux="$work/vmlinuz" --change-section-vma .linux=0x2000000 \
  --add-section .initrd="$work/initrd.img" --change-section-vma .initrd=0x3000000 \
  "$stub" "$work/uki.efi"
bash "$(dirname "$0")/pe-normalize.sh" "$work/uki.efi"
cp "$work/uki.efi" "$out/uki.efi"

# 4. ESP: FAT with fixed volume ID and time stamps.
esp_mib=$(( $(mib_up "$(stat -c %s "$work/uki.efi")") + 4 ))
[ "$esp_mib" -lt 34 ] && esp_mib=34
truncate -s "$((esp_mib * MiB))" "$work/esp.img"
mkfs.vfat --invariant -F 32 -i "$esp_volid" -n ESP "$work/esp.img" >&2
touch -d "@$sde" "$work/uki.efi"
export MTOOLS_SKIP_CHECK=1
mmd -i "$work/esp.img" ::/EFI ::/EFI/BOOT
mcopy -m -i "$work/esp.img" "$work/uki.efi" ::/EFI/BOOT/BOOTX64.EFI

# 5. GPT disk: ESP, root (erofs), root-verity; 1 MiB alignment, backup GPT in the last MiB.
root_mib=$(( $(stat -c %s "$work/root.img") / MiB )) verity_mib=$(( $(stat -c %s "$work/verity.img") / MiB ))
total_mib=$(( 1 + esp_mib + root_mib + verity_mib + 1 ))
img="$out/node-image.raw"
rm -f "$img" && truncate -s "$((total_mib * MiB))" "$img"
sfdisk --quiet "$img" <<SFDISK
label: gpt
label-id: $disk_guid
unit: sectors
first-lba: 2048
start=$((1 * 2048)), size=$((esp_mib * 2048)), type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$esp_uuid, name="esp"
start=$(((1 + esp_mib) * 2048)), size=$((root_mib * 2048)), type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$(as_uuid "$(echo "$roothash" | cut -c1-32)"), name="root"
start=$(((1 + esp_mib + root_mib) * 2048)), size=$((verity_mib * 2048)), type=2C7357ED-EBD2-46D9-AEC1-23D437EC2BF5, uuid=$(as_uuid "$(echo "$roothash" | cut -c33-64)"), name="root-verity"
SFDISK
dd if="$work/esp.img" of="$img" bs=1M seek=1 conv=notrunc status=none
dd if="$work/root.img" of="$img" bs=1M seek=$((1 + esp_mib)) conv=notrunc status=none
dd if="$work/verity.img" of="$img" bs=1M seek=$((1 + esp_mib + root_mib)) conv=notrunc status=none
printf '%s\n' "$roothash" > "$out/roothash"
printf '%s\n' "$cmdline" > "$out/cmdline"
