// Package localcluster runs the embedded local Kubernetes cluster: etcd and
// the real upstream kube-apiserver, kube-controller-manager and
// kube-scheduler as processes on loopback, with certificates and RBAC.
package localcluster
