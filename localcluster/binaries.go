package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// binaries are the programs the control plane runs, all built by make
// k8s-bin into .cache/k8s/<version>/bin: etcd from its Go modules, and the
// Kubernetes daemons from source.
type binaries struct{ etcd, apiserver, controllers, scheduler string }

func (c *Cluster) binaries() (binaries, error) {
	dir := c.binDir
	if dir == "" {
		stamp, err := findUp(filepath.Join(".cache", "k8s", KubernetesVersion, "bin", ".stamp"))
		if err != nil {
			return binaries{}, fmt.Errorf("localcluster: the control plane is not built: run `make k8s-bin` (about 13 minutes the first time): %w", err)
		}
		dir = filepath.Dir(stamp)
	}
	b := binaries{
		etcd:        filepath.Join(dir, "etcd"),
		apiserver:   filepath.Join(dir, "kube-apiserver"),
		controllers: filepath.Join(dir, "kube-controller-manager"),
		scheduler:   filepath.Join(dir, "kube-scheduler"),
	}
	for _, p := range []string{b.etcd, b.apiserver, b.controllers, b.scheduler} {
		if !exists(p) {
			return binaries{}, fmt.Errorf("localcluster: %s missing: run `make k8s-bin`", p)
		}
	}
	return b, nil
}

// findUp looks for rel under the current directory and its parents.
func findUp(rel string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if p := filepath.Join(dir, rel); exists(p) {
			return p, nil
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("no %s in %s or a parent", rel, wd)
		}
	}
}
