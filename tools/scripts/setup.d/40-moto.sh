#!/usr/bin/env bash
# Installs moto (PyPI, pinned) in server mode into a virtual environment under
# ~/.cache/asterism/moto-venv, so Debian 12's system Python stays untouched (PEP 668).
# libs/metadata's AWS tests start `moto_server` from there on loopback (ADR 0022).
# moto pulls a current python cryptography: libs/crypto/src/ssh.spec.ts verifies SSH certificates with
# this venv's python3 when the system one (Debian 12: cryptography 38) cannot.
set -euo pipefail
MOTO_VERSION=5.1.4
venv="${ASTERISM_MOTO_VENV:-$HOME/.cache/asterism/moto-venv}"
stamp="$venv/.moto-$MOTO_VERSION"
if [ -f "$stamp" ] && [ -x "$venv/bin/moto_server" ]; then
  echo "[40-moto] moto $MOTO_VERSION present in $venv"
  exit 0
fi
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
"$py" -m venv "$venv" || { echo "[40-moto] python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
touch "$stamp"
echo "[40-moto] installed moto $MOTO_VERSION into $venv"
