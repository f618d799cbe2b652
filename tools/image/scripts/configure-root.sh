#!/usr/bin/env bash
# Configures the unpacked root of the node image: units enabled, first-boot identity empty,
# no login, and nothing that writes to the read-only root at boot.
set -euo pipefail
root=${1:?usage: configure-root.sh <root>}
systemctl --root="$root" enable asterism-bootstrapper.service asterism-state-disk.service asterism-ssh-hostkey.service asterism-pcrs.service systemd-networkd.service systemd-networkd-wait-online.service containerd.service >&2
# systemd's own PCR extensions (boot phases into PCR 11, and in later versions machine ID and file
# systems into PCR 15) would make PCR 11 depend on when it is read and PCR 15 non-zero: masked,
# so PCR 11 holds exactly the UKI sections and PCR 15 only the cluster ID (docs/protocol/node-image.md).
for unit in systemd-pcrphase.service systemd-pcrphase-sysinit.service systemd-pcrphase-initrd.service \
  systemd-pcrmachine.service systemd-pcrfs-root.service systemd-pcrfs@.service \
  apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service systemd-timesyncd.service getty@tty1.service; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
# An empty machine-id: systemd makes a new one per boot on the tmpfs-backed /etc.
: > "$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"
echo node > "$root/etc/hostname"
# Root has no password and no login: the node is debugged through its serial console log.
sed -i 's/^root:[^:]*:/root:*:/' "$root/etc/shadow"
# initramfs-tools: only the modules our hook lists (storage of QEMU and the clouds, dm-verity, erofs,
# overlay): a small initramfs boots faster; gzip (the root has no zstd).
sed -i 's/^MODULES=.*/MODULES=list/; s/^COMPRESS=.*/COMPRESS=gzip/' "$root/etc/initramfs-tools/initramfs.conf"
