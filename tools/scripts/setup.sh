#!/usr/bin/env bash
# Installs everything the tests and the local cluster need on a fresh Debian 12 machine:
# Debian packages (swtpm, tpm2-tools, cryptsetup, openssl, unzip, python3-venv), npm dependencies, and the
# tools built or unpacked into ignored cache folders. Safe to re-run: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { printf '[setup] %s\n' "$*"; }
need_root() { [ "$(id -u)" = 0 ] || { say "needs root for apt-get (or install the packages listed in this script yourself)"; exit 1; }; }

APT_PACKAGES=(swtpm swtpm-tools tpm2-tools cryptsetup-bin openssl unzip ca-certificates openssh-client python3-cryptography
  # setup.d/40-moto.sh: `python3 -m venv` needs ensurepip (python3-venv pulls python3.11-venv and the pip wheel)
  python3 python3-venv
  # real nodes (ADRs 0018, 0019): container runtime, pod network, image builder, static pause
  containerd runc containernetworking-plugins iptables conntrack iproute2 buildah busybox-static socat gcc libc6-dev
  # node image (tools/image, docs/adr/0033): builder, file systems, UKI stub, partitioning, and QEMU + OVMF to boot it
  mmdebstrap erofs-utils dosfstools mtools fdisk binutils systemd-boot-efi qemu-system-x86 qemu-utils ovmf)
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  need_root
  say "installing Debian packages: ${missing[*]}"
  start=$SECONDS
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  say "Debian packages installed in $((SECONDS - start))s"
else
  say "Debian packages present"
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # `npm install` (not `npm ci`): the registry we reach lacks some other-platform optional
  # binaries (e.g. @bufbuild/buf-darwin-*), so npm cannot record them in the lock file and
  # `npm ci` refuses the lock as out of sync. `npm install` still installs the locked versions.
  say "installing npm dependencies (npm install, locked versions)"
  start=$SECONDS
  npm install --no-audit --no-fund
  say "npm dependencies installed in $((SECONDS - start))s"
else
  say "npm dependencies up to date"
fi

for hook in tools/scripts/setup.d/*.sh; do
  [ -e "$hook" ] || continue
  say "running $(basename "$hook")"
  bash "$hook"
done
say "done"
