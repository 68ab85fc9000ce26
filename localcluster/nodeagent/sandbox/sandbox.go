package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
		return Mount{}, fmt.Errorf("pod-exec: mount %q is not source:/target[:ro]", s)
	}
	return Mount{Source: parts[0], Target: parts[1], ReadOnly: len(parts) == 3}, nil
}

// Sandbox is what `kafkachaos-node pod-exec` sets up for a container
// before it execs the container's program.
type Sandbox struct {
	Hostname string
	// Scratch is a host directory of the container's, for the mount point
	// of its writable layer.
	Scratch string
	// WorkDir is the container's working directory (its spec's
	// workingDir), made if missing, as a runtime does; "" is /, where a
	// runtime starts an image without a WORKDIR (apache/kafka's has none).
	WorkDir string
	Mounts  []Mount
}

// Args are the arguments of `kafkachaos-node pod-exec` that run path
// with args inside the sandbox.
func (sb Sandbox) Args(path string, args []string) []string {
	out := []string{"pod-exec", "--hostname", sb.Hostname, "--scratch", sb.Scratch}
	if sb.WorkDir != "" {
		out = append(out, "--workdir", sb.WorkDir)
	}
	for _, m := range sb.Mounts {
		out = append(out, "--mount", m.String())
	}
	return append(append(out, "--", path), args...)
}

// Namespaces are the namespaces a pod's process starts in (the clone flags
// of pod-exec's process): its own mount namespace (for its filesystem and
// volumes) and UTS namespace (for its hostname). Linux only, as root.
const Namespaces = syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS

// containerFSSize bounds the tmpfs that holds a container's writable
// layer: what it writes outside its volumes (a JVM's hsperfdata, a log
// written to the image's directory). It is memory, which the pod's stats
// (its processes' RSS) do not count.
const containerFSSize = "2g"

// PodExec runs in a new mount and UTS namespace (the agent starts it so,
// with Namespaces):
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
func PodExec(sb Sandbox, path string, args, env []string) error {
	if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("pod-exec: make mounts private: %w", err)
	}
	if sb.Hostname != "" {
		if err := syscall.Sethostname([]byte(sb.Hostname)); err != nil {
			return fmt.Errorf("pod-exec: hostname: %w", err)
		}
	}
	wd := cmp.Or(sb.WorkDir, "/")
	root, err := containerRoot(sb.Scratch)
	if err != nil {
		return err
	}
	for _, m := range sb.Mounts {
		if err := bindVolume(root, m); err != nil {
			return err
		}
	}
	if err := pivot(root); err != nil {
		return err
	}
	if err := os.MkdirAll(wd, 0o755); err != nil {
		return fmt.Errorf("pod-exec: working directory %s: %w", wd, err)
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
		return syscall.Mount("overlay", at, "overlay", 0, "lowerdir="+overlayPath(lower)+",upperdir="+overlayPath(upper)+",workdir="+overlayPath(work))
	}
	if err := overlay("/", root); err != nil {
		return "", fmt.Errorf("pod-exec: overlay of /: %w", err)
	}
	// Parents before their children, whatever order the kernel lists them in.
	slices.SortStableFunc(hostMounts, func(a, b *mountinfo.Info) int {
		return cmp.Compare(strings.Count(a.Mountpoint, "/"), strings.Count(b.Mountpoint, "/"))
	})
	for _, m := range hostMounts {
		// A namespace file (ip netns) is no filesystem.
		if m.Mountpoint == "/" || Under(m.Mountpoint, kernelTrees...) || Under(m.Mountpoint, fs) || m.FSType == "nsfs" {
			continue
		}
		at, err := securejoin.SecureJoin(root, m.Mountpoint)
		if err != nil {
			return "", fmt.Errorf("pod-exec: host mount %s: %w", m.Mountpoint, err)
		}
		st, err := os.Stat(m.Mountpoint)
		if err != nil {
			continue // gone since the list was read, or not ours to read
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
	shm, err := securejoin.SecureJoin(root, "/dev/shm") // a symlink on some hosts
	if err != nil {
		return "", fmt.Errorf("pod-exec: /dev/shm: %w", err)
	}
	if err := syscall.Mount("shm", shm, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return "", fmt.Errorf("pod-exec: /dev/shm: %w", err)
	}
	return root, nil
}

// Under reports whether path is one of dirs or below one (every path is
// below "/"). Paths are compared as given: clean them first.
func Under(path string, dirs ...string) bool {
	for _, d := range dirs {
		if path == d || d == "/" || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// overlayPath escapes the characters that overlayfs's options separate
// with (a ',' between options, a ':' between lower layers).
func overlayPath(p string) string {
	return strings.NewReplacer(`\`, `\\`, ",", `\,`, ":", `\:`).Replace(p)
}

// bindReadOnly binds src at at, where the host's root has it already. Not
// recursively: the mounts under src are the loop's, each in its turn.
func bindReadOnly(src, at string) error {
	if err := syscall.Mount(src, at, "", syscall.MS_BIND, ""); err != nil {
		return err
	}
	return syscall.Mount("", at, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
}

// bindVolume binds volume m at its target in root; the mount point is
// made in the container's own layer.
func bindVolume(root string, m Mount) error {
	if t := filepath.Clean(m.Target); Under(t, "/proc", "/sys", "/dev") && !Under(t, "/dev/shm") {
		// Those are the host's own trees, bound as they are (but for
		// /dev/shm, the container's own).
		return fmt.Errorf("pod-exec: a volume at %s, in the host's /proc, /sys or /dev, is not supported", m.Target)
	}
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
