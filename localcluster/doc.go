// Package localcluster runs an embedded Kubernetes cluster on this machine.
//
// The cluster is etcd and the real upstream kube-apiserver,
// kube-controller-manager and kube-scheduler as processes on loopback, with
// certificates and RBAC, and the node agent (the kafkachaos-node binary,
// localcluster/nodeagent/...), which registers the nodes and runs their
// pods as host processes. This package runs the agent but does not import
// it, so the kafkachaos CLI carries none of it. Its state (PKI, etcd data,
// logs, pid files, kubeconfig) lives in a state dir, so that a later
// process finds and stops the daemons.
package localcluster
