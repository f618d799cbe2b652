#!/usr/bin/env bash
# Makes objcopy's PE output reproducible: objcopy writes the current time into the COFF header's
# TimeDateStamp and a CheckSum over it. The time stamp becomes SOURCE_DATE_EPOCH, the checksum 0
# (UEFI does not check it; it is outside the Authenticode hash anyway).
# Usage: pe-normalize.sh <file.efi>
set -euo pipefail
f=$1 sde=${SOURCE_DATE_EPOCH:?}
pe=$(od -An -tu4 -j60 -N4 "$f" | tr -d ' ')
le32() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 24 & 255)))"; }
le32 "$sde" | dd of="$f" bs=1 seek=$((pe + 8)) conv=notrunc status=none
le32 0 | dd of="$f" bs=1 seek=$((pe + 24 + 64)) conv=notrunc status=none
