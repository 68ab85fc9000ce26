package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/moby/sys/mountinfo"
)

// Mount is one volume mount of a container: a host path bound at the
// container's mountPath inside the pod's own mount namespace.
type Mount struct {
	Source   string
	Target   string
	ReadOnly bool
}

// String is the --mount flag form: source:target[:ro].
func (m Mount) String() string {
	s := m.Source + ":" + m.Target
	if m.ReadOnly {
		s += ":ro"
	}
	return s
}

// ParseMount parses the --mount flag form.
func ParseMount(s string) (Mount, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !filepath.IsAbs(parts[1]) || (len(parts) == 3 && parts[2] != "ro") {
		return Mount{}, fmt.Errorf("agent: mount %q is not source:/target[:ro]", s)
	}
	return Mount{Source: parts[0], Target: parts[1], ReadOnly: len(parts) == 3}, nil
}

// podExecArgs are the arguments of `kafkachaos cluster pod-exec` that run
// path with args inside a pod's namespaces.
func podExecArgs(hostname, scratch string, mounts []Mount, path string, args []string) []string {
	out := []string{"cluster", "pod-exec", "--hostname", hostname, "--scratch", scratch}
	for _, m := range mounts {
		out = append(out, "--mount", m.String())
	}
	return append(append(out, "--", path), args...)
}

// podNamespaces are the namespaces a pod's process starts in: its own mount
// namespace (for its filesystem and volumes) and UTS namespace (for its
// hostname). Linux only, as root.
const podNamespaces = syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS

// containerFSSize bounds the tmpfs that holds a container's writable
// layer: what it writes outside its volumes (a JVM's hsperfdata, a log
// written to the image's directory).
const containerFSSize = "2g"

// PodExec runs in a new mount and UTS namespace (the agent starts it so):
// it sets the hostname, gives the container a filesystem of its own, binds
// each volume at its target, and execs the container's program.
//
// The container's filesystem is the host's, read through overlays whose
// writable layers live in a tmpfs of the container's namespace: what the
// container writes outside its volumes is its own, the host never sees it,
// and it is gone when the container ends, as a container runtime's
// writable layer is when a pod's container is replaced. The program starts
// in that filesystem as its root (pivot_root), with the host's /proc, /sys
// and /dev and a /dev/shm of its own.
func PodExec(hostname, scratch string, mounts []Mount, path string, args, env []string) error {
	if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("pod-exec: make mounts private: %w", err)
	}
	if hostname != "" {
		if err := syscall.Sethostname([]byte(hostname)); err != nil {
			return fmt.Errorf("pod-exec: hostname: %w", err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("pod-exec: working directory: %w", err)
	}
	root, err := containerRoot(scratch)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if err := bindVolume(root, m); err != nil {
			return err
		}
	}
	if err := pivot(root); err != nil {
		return err
	}
	if err := os.Chdir(wd); err != nil {
		return fmt.Errorf("pod-exec: working directory %s: %w", wd, err)
	}
	return syscall.Exec(path, append([]string{path}, args...), env)
}

// containerRoot builds the container's root under scratch and returns its
// path: an overlay of every host filesystem (/ and the mounts under it,
// but for the kernel's trees, which are bound), each with its writable
// layer in a tmpfs mounted at scratch/fs. A host mount that cannot be a
// lower layer is bound read-only.
func containerRoot(scratch string) (string, error) {
	// The kernel's trees are bound into the root as they are on the host.
	kernelTrees := []string{"/proc", "/sys", "/dev"}
	hostMounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return "", fmt.Errorf("pod-exec: host mounts: %w", err)
	}
	fs := filepath.Join(scratch, "fs")
	if err := os.MkdirAll(fs, 0o755); err != nil {
		return "", fmt.Errorf("pod-exec: %w", err)
	}
	if err := syscall.Mount("tmpfs", fs, "tmpfs", 0, "mode=0755,size="+containerFSSize); err != nil {
		return "", fmt.Errorf("pod-exec: tmpfs for the container's writes: %w", err)
	}
	root := filepath.Join(fs, "root")
	layer := 0
	overlay := func(lower, at string) error {
		layer++
		upper, work := filepath.Join(fs, "upper", strconv.Itoa(layer)), filepath.Join(fs, "work", strconv.Itoa(layer))
		for _, d := range []string{upper, work, at} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		return syscall.Mount("overlay", at, "overlay", 0, "lowerdir="+lower+",upperdir="+upper+",workdir="+work)
	}
	if err := overlay("/", root); err != nil {
		return "", fmt.Errorf("pod-exec: overlay of /: %w", err)
	}
	for _, m := range hostMounts {
		// A namespace file (ip netns) is no filesystem.
		if m.Mountpoint == "/" || under(m.Mountpoint, kernelTrees...) || under(m.Mountpoint, fs) || m.FSType == "nsfs" {
			continue
		}
		at := filepath.Join(root, m.Mountpoint)
		st, err := os.Stat(m.Mountpoint)
		if err != nil {
			continue // a mount hidden by a later one
		}
		if !st.IsDir() || overlay(m.Mountpoint, at) != nil {
			// A file bound on the host (a runtime's /etc/resolv.conf), or a
			// filesystem that cannot be a lower layer.
			if err := bindReadOnly(m.Mountpoint, at); err != nil {
				return "", fmt.Errorf("pod-exec: host mount %s (%s): %w", m.Mountpoint, m.FSType, err)
			}
		}
	}
	for _, t := range kernelTrees {
		if err := syscall.Mount(t, filepath.Join(root, t), "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return "", fmt.Errorf("pod-exec: bind %s: %w", t, err)
		}
	}
	if err := syscall.Mount("shm", filepath.Join(root, "dev/shm"), "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return "", fmt.Errorf("pod-exec: /dev/shm: %w", err)
	}
	return root, nil
}

// under reports whether path is one of dirs or below one.
func under(path string, dirs ...string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// bindReadOnly binds src at at, where the host's root has it already.
func bindReadOnly(src, at string) error {
	if err := syscall.Mount(src, at, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return err
	}
	return syscall.Mount("", at, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
}

// bindVolume binds volume m at its target in root; the mount point is
// made in the container's own layer.
func bindVolume(root string, m Mount) error {
	st, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("pod-exec: volume source: %w", err)
	}
	// Within root: a symlink on the way (/var/run -> /run) is the
	// container's, not the host's.
	at, err := securejoin.SecureJoin(root, m.Target)
	if err != nil {
		return fmt.Errorf("pod-exec: mount path %s: %w", m.Target, err)
	}
	if st.IsDir() {
		err = os.MkdirAll(at, 0o755)
	} else if _, err = os.Stat(at); errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(at), 0o755); err == nil {
			err = os.WriteFile(at, nil, 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("pod-exec: mount point %s: %w", m.Target, err)
	}
	if err := syscall.Mount(m.Source, at, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("pod-exec: bind %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		if err := syscall.Mount("", at, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("pod-exec: read-only %s: %w", m.Target, err)
		}
	}
	return nil
}

// pivot makes root the process's root, and detaches the host's.
func pivot(root string) error {
	old := filepath.Join(root, ".host-root")
	if err := os.MkdirAll(old, 0o700); err != nil {
		return fmt.Errorf("pod-exec: %w", err)
	}
	if err := syscall.PivotRoot(root, old); err != nil {
		return fmt.Errorf("pod-exec: pivot_root to %s: %w", root, err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("pod-exec: %w", err)
	}
	if err := syscall.Unmount("/.host-root", syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("pod-exec: detach the host's root: %w", err)
	}
	return os.Remove("/.host-root")
}
