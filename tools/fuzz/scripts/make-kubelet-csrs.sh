#!/usr/bin/env bash
# Regenerates the kubelet CSRs the request.join target starts from (fixtures/kubelet-csr-*.der):
# made by openssl, as a joining node's kubelet CSR looks (O=system:nodes, CN=system:node:<name>,
# an IP SAN). Kept in the repository so the gate's inputs are the same on every run.
set -euo pipefail
cd "$(dirname "$0")/../fixtures"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/ec.key"
openssl genrsa -out "$tmp/rsa.key" 2048
for k in ec rsa; do
  openssl req -new -key "$tmp/$k.key" -subj /O=system:nodes/CN=system:node:worker-1 -addext subjectAltName=IP:10.0.0.5 -outform DER -out "kubelet-csr-$k.der"
done
