#!/usr/bin/env bash
# The supervisor of one real local node (docs/adr/0019-node-runtime.md). Started by
# tools/local-cluster (src/real/node-process.ts), never by hand:
#
#   node.sh enter <node-dir> -- <bootstrapper command...>
#
# "enter" moves itself into the node's cgroups (so every process of the node, containers
# included, can be found and killed there), then re-executes itself in the node's network
# namespace and a fresh mount + UTS namespace ("inside"). Inside, it gives the node its own
# filesystem view (overlays over /etc /var /opt /usr, the node's own /run, /var/lib/containerd,
# /var/lib/kubelet, /var/log, the vTPM socket at $NODE_TPM_AT), starts containerd, imports the
# workload images, supervises the kubelet the way kubeadm's systemd drop-in does, and runs the
# bootstrapper, which exits once the node is bootstrapped. Everything it needs
# comes from <node-dir>/config/node.env and the files next to it, written by the tool.
set -euo pipefail

phase=${1:?phase}
node_dir=${2:?node dir}
shift 2
[ "${1:-}" = "--" ] && shift
# shellcheck source=/dev/null
. "$node_dir/config/node.env"

log() { printf '%s node.sh[%s]: %s\n' "$(date -u +%H:%M:%S.%3N)" "$NODE_NAME" "$*"; }

if [ "$phase" = enter ]; then
  for dir in $NODE_CGROUPS; do echo $$ > "$dir/cgroup.procs"; done
  exec nsenter --net="/run/netns/$NODE_NETNS" unshare --mount --uts --propagation private "$0" inside "$node_dir" -- "$@"
fi
[ "$phase" = inside ] || { echo "node.sh: unknown phase $phase" >&2; exit 2; }

root=$node_dir/root
hostname "$NODE_NAME"
for d in etc var opt usr; do
  mkdir -p "$node_dir/overlay/upper/$d" "$node_dir/overlay/work/$d"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$node_dir/overlay/upper/$d,workdir=$node_dir/overlay/work/$d" "/$d"
done
mkdir -p "$root/run" "$root/var/lib/containerd" "$root/var/lib/kubelet" "$root/var/log" /var/lib/containerd /var/lib/kubelet /var/log
mount --bind "$root/var/lib/containerd" /var/lib/containerd
mount --bind "$root/var/lib/kubelet" /var/lib/kubelet
mount --bind "$root/var/log" /var/log
mount --bind "$root/run" /run
# The node's vTPM at one path on every node, as /dev/tpmrm0 is on a VM: the chart's
# verification-service DaemonSet mounts it from there (hostPath), while the swtpm socket itself
# lives in the node's folder on the host, at a path no chart value could name per node.
mkdir -p "$(dirname "$NODE_TPM_AT")"
touch "$NODE_TPM_AT"
mount --bind "$NODE_TPM_SOCKET" "$NODE_TPM_AT"
# The host's hostname/resolver files must not leak into pods.
echo "$NODE_NAME" > /etc/hostname
printf '127.0.0.1 localhost\n%s %s\n' "$NODE_IP" "$NODE_NAME" > /etc/hosts

install -D -m 0644 "$node_dir/config/containerd.toml" /etc/containerd/config.toml
install -D -m 0644 "$node_dir/config/10-asterism.conflist" /etc/cni/net.d/10-asterism.conflist
install -D -m 0644 "$node_dir/config/kubeletconfiguration+merge.yaml" /opt/kubernetes/patches/kubeletconfiguration+merge.yaml
# No Kubernetes binary comes from the host: the bootstrapper installs kubelet, kubeadm, kubectl,
# crictl (/run/state/bin) and the CNI plugins (/opt/cni/bin) from its init request or join ticket,
# each checked by hash, before kubeadm runs (docs/protocol/components.md); containerd's CNI
# plugin folder is /opt/cni/bin, which only the installer fills (the host has none there).
mkdir -p /run/state/bin /etc/kubernetes/manifests
export PATH=/run/state/bin:$PATH

children=()
stop() {
  log "stopping"
  kill "${children[@]}" 2>/dev/null || true
  wait || true
  exit 0
}
trap stop TERM INT

log "starting containerd"
containerd --config /etc/containerd/config.toml >> /var/log/containerd.log 2>&1 &
children+=($!)
for _ in $(seq 100); do [ -S /run/containerd/containerd.sock ] && break; sleep 0.1; done
[ -S /run/containerd/containerd.sock ] || { log "containerd did not start (see /var/log/containerd.log)"; exit 1; }

# The Kubernetes and service images come with the components: the bootstrapper imports them,
# checked by digest, before kubeadm runs (docs/protocol/components.md). Only the tests' workload
# images (NODE_IMAGES: busybox) are imported here, while the bootstrapper attests and joins; the
# kubelet starts once they are there.
log "importing workload images"
(
  for archive in $NODE_IMAGES; do ctr -n k8s.io images import --all-platforms "$archive" > /dev/null; done
  log "images: $(ctr -n k8s.io images ls -q | grep -vc '^sha256' || true)"
  touch /run/asterism-images-imported
) &
children+=($!)

# Like kubeadm's kubelet.service drop-in: wait for kubeadm's configuration, take the flags
# kubeadm wrote, restart after a second whenever the kubelet exits. A configuration from an earlier
# boot is used only after the bootstrapper signals that this boot's disk key is in (rejoin or
# recover): on a VM it lies on the locked state disk, so the control plane must stay down until then.
# kubeadm writes config.yaml, then kubeadm-flags.env (one line ending in a quote) and expects the
# kubelet right away: the files are checked every 0.1 s, so the kubelet starts within ~0.1 s of
# them (a 1 s poll cost every join ~0.5 s on average, docs/adr/0019-node-runtime.md).
touch /run/asterism-boot
kubelet_configured() {
  [ -f /var/lib/kubelet/config.yaml ] && grep -qs '^KUBELET_KUBEADM_ARGS=".*"$' /var/lib/kubelet/kubeadm-flags.env
}
(
  while true; do
    if [ -f /run/asterism-images-imported ] && kubelet_configured &&
      { [ /var/lib/kubelet/kubeadm-flags.env -nt /run/asterism-boot ] || [ -f /run/asterism-start-kubelet ]; }; then
      KUBELET_KUBEADM_ARGS=""
      # shellcheck source=/dev/null
      . /var/lib/kubelet/kubeadm-flags.env
      log "starting the kubelet"
      # shellcheck disable=SC2086
      kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf \
        --config=/var/lib/kubelet/config.yaml $KUBELET_KUBEADM_ARGS >> /var/log/kubelet.log 2>&1 || true
      echo "kubelet exited" >> /var/log/kubelet.log
      sleep 1
    fi
    sleep 0.1
  done
) &
children+=($!)

log "starting the bootstrapper"
"$@" &
children+=($!)
wait "${children[-1]}" || log "bootstrapper exited with $?"
# The bootstrapper stops after bootstrapping; the node (containerd, kubelet) keeps running.
while true; do sleep 3600 & wait $! || true; done
