// Command etcd runs the etcd server at the version Kubernetes pins, for local control planes.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
