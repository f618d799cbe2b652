//go:build tools

// Package tools pins the node tools that are the same for every Kubernetes version: crictl and
// the CNI plugins a node's pod network uses (bridge, host-local, loopback, portmap).
package tools

import (
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
	_ "sigs.k8s.io/cri-tools/cmd/crictl"
)
