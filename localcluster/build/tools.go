//go:build tools

// Package build pins the Kubernetes control-plane commands that
// scripts/build-k8s.sh compiles; it is never imported.
package build

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)
