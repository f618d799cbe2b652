#!/usr/bin/env bash
# Configures the unpacked root of the node image: units enabled, first-boot identity empty,
# no login, and nothing that writes to the read-only root at boot.
set -euo pipefail
root=${1:?usage: configure-root.sh <root>}
systemctl --root="$root" enable asterism-bootstrapper.service asterism-ssh-hostkey.service asterism-pcrs.service systemd-networkd.service systemd-networkd-wait-online.service >&2
# containerd keeps its data on the state disk: the bootstrapper starts it once the disk is mounted
# (docs/adr/0041-state-disk-mapper.md), so the package's own enablement is removed.
systemctl --root="$root" disable containerd.service >&2
# Also masked: nothing logs in (no getty on the serial console, which carries the boot log) and
# nothing on a node needs the weekly/daily housekeeping timers, nor the modules and file systems
# systemd loads for displays, pstore, FUSE, loop devices, debugfs and tracefs (configfs stays: the
# SEV-SNP and TDX issuers read configfs-tsm); on TCG
# every unit costs boot time (15 units starting at once took 18 s before the first finished).
# systemd's own PCR extensions (boot phases into PCR 11, and in later versions machine ID and file
# systems into PCR 15) would make PCR 11 depend on when it is read and PCR 15 non-zero: masked,
# so PCR 11 holds exactly the UKI sections and PCR 15 only the cluster ID (docs/protocol/node-image.md).
for unit in systemd-pcrphase.service systemd-pcrphase-sysinit.service systemd-pcrphase-initrd.service \
  systemd-pcrmachine.service systemd-pcrfs-root.service systemd-pcrfs@.service \
  apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service systemd-timesyncd.service getty@tty1.service \
  serial-getty@ttyS0.service dpkg-db-backup.timer fstrim.timer \
  modprobe@drm.service modprobe@efi_pstore.service modprobe@fuse.service modprobe@loop.service \
  sys-fs-fuse-connections.mount sys-kernel-debug.mount sys-kernel-tracing.mount systemd-pstore.service; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
# Generators the node does not need (no crypttab/integritytab/veritytab: the initramfs opens the
# verity root and the bootstrapper the state disk; no gettys, SysV scripts, rc.local, hibernation,
# GPT auto-mounts or offline updates). On TCG each one PID 1 runs cost 1-7 s of boot (exec and
# page-in of libsystemd-shared through dm-verity): measured with systemd.log_level=debug.
mkdir -p "$root/etc/systemd/system-generators"
for gen in systemd-cryptsetup-generator systemd-integritysetup-generator systemd-veritysetup-generator \
  systemd-debug-generator systemd-getty-generator systemd-gpt-auto-generator systemd-hibernate-resume-generator \
  systemd-rc-local-generator systemd-run-generator systemd-system-update-generator systemd-sysv-generator; do
  ln -sf /dev/null "$root/etc/systemd/system-generators/$gen"
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
