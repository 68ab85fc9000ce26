package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// binaries are the programs the control plane runs.
type binaries struct{ etcd, apiserver, controllers, scheduler string }

func (c *Cluster) binaries() (binaries, error) {
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		return binaries{}, errors.New("localcluster: etcd not found: install Debian's etcd-server (apt-get install etcd-server)")
	}
	dir := c.binDir
	if dir == "" {
		dir, err = findUp(filepath.Join(".cache", "k8s", KubernetesVersion, "bin", ".stamp"))
		if err != nil {
			return binaries{}, fmt.Errorf("localcluster: the control plane is not built: run `make k8s-bin` (about 12 minutes the first time): %w", err)
		}
		dir = filepath.Dir(dir)
	}
	b := binaries{
		etcd:        etcd,
		apiserver:   filepath.Join(dir, "kube-apiserver"),
		controllers: filepath.Join(dir, "kube-controller-manager"),
		scheduler:   filepath.Join(dir, "kube-scheduler"),
	}
	for _, p := range []string{b.apiserver, b.controllers, b.scheduler} {
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
