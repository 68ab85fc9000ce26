// Package kube applies manifests to a Kubernetes cluster with server-side apply and waits for pods to be Ready.
package kube
