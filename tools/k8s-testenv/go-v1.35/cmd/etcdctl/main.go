// Command etcdctl is etcd's client CLI at the same version as cmd/etcd, for inspecting the
// members of a local cluster's etcd (etcdctl member list).
package main

import (
	"go.etcd.io/etcd/etcdctl/v3/ctlv3"
)

func main() {
	ctlv3.MustStart()
}
