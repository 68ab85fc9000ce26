// Package clusterstest helps tests that need a kubeconfig on disk.
package clusterstest
