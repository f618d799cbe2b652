#!/usr/bin/env bash
# Configures the unpacked root of the node image: units enabled, first-boot identity empty,
# no login, and nothing that writes to the read-only root at boot.
set -euo pipefail
root=${1:?usage: configure-root.sh <root>}
systemctl --root="$root" enable asterism-bootstrapper.service asterism-pcrs.service systemd-networkd.service systemd-networkd-wait-online.service containerd.service >&2
systemctl --root="$root" mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service systemd-timesyncd.service getty@tty1.service >&2 2>/dev/null || true
# An empty machine-id: systemd makes a new one per boot on the tmpfs-backed /etc.
: > "$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"
echo node > "$root/etc/hostname"
# Root has no password and no login: the node is debugged through its serial console log.
sed -i 's/^root:[^:]*:/root:*:/' "$root/etc/shadow"
# initramfs-tools: the smaller "dep"-less module set plus our hook's modules, zstd.
sed -i 's/^MODULES=.*/MODULES=most/; s/^COMPRESS=.*/COMPRESS=zstd/' "$root/etc/initramfs-tools/initramfs.conf"
