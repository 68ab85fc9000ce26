// Command etcd is etcd's own server command (go.etcd.io/etcd/server/v3's
// etcdmain), built by scripts/build-k8s.sh next to the control plane, so
// the embedded cluster needs no etcd from the system's packages.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
