package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// namespace (for its volumes) and UTS namespace (for its hostname). Linux
// only, as root.
const podNamespaces = syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS

// PodExec runs in a new mount and UTS namespace (the agent starts it so):
// it sets the hostname, makes every mount private, binds each volume at its
// target, and execs the container's program. A target whose parent
// directories are missing gets them inside an overlay of its nearest
// existing ancestor, whose upper layer lives in scratch, so the host's own
// directories are never changed.
func PodExec(hostname, scratch string, mounts []Mount, path string, args, env []string) error {
	if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("pod-exec: make mounts private: %w", err)
	}
	if hostname != "" {
		if err := syscall.Sethostname([]byte(hostname)); err != nil {
			return fmt.Errorf("pod-exec: hostname: %w", err)
		}
	}
	// First every mount point, then every bind: a new overlay must not
	// cover a volume bound before it.
	var overlaid []string
	underOverlay := func(p string) bool {
		for _, o := range overlaid {
			if p == o || strings.HasPrefix(p, o+"/") {
				return true
			}
		}
		return false
	}
	for i, m := range mounts {
		st, err := os.Stat(m.Source)
		if err != nil {
			return fmt.Errorf("pod-exec: volume source: %w", err)
		}
		if _, err := os.Stat(m.Target); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if !underOverlay(m.Target) {
			anc := filepath.Dir(m.Target)
			for {
				if _, err := os.Stat(anc); err == nil {
					break
				}
				anc = filepath.Dir(anc)
			}
			if anc == "/" {
				return fmt.Errorf("pod-exec: mount path %s: a new top-level directory is not supported; mount under an existing directory such as /var/lib or /opt", m.Target)
			}
			dir := filepath.Join(scratch, "overlay"+strconv.Itoa(i))
			upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
			for _, d := range []string{upper, work} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return fmt.Errorf("pod-exec: %w", err)
				}
			}
			opts := "lowerdir=" + anc + ",upperdir=" + upper + ",workdir=" + work
			if err := syscall.Mount("overlay", anc, "overlay", 0, opts); err != nil {
				return fmt.Errorf("pod-exec: overlay on %s: %w", anc, err)
			}
			overlaid = append(overlaid, anc)
		}
		if st.IsDir() {
			err = os.MkdirAll(m.Target, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(m.Target), 0o755); err == nil {
			err = os.WriteFile(m.Target, nil, 0o644)
		}
		if err != nil {
			return fmt.Errorf("pod-exec: mount point %s: %w", m.Target, err)
		}
	}
	for _, m := range mounts {
		if err := syscall.Mount(m.Source, m.Target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("pod-exec: bind %s at %s: %w", m.Source, m.Target, err)
		}
		if m.ReadOnly {
			if err := syscall.Mount("", m.Target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("pod-exec: read-only %s: %w", m.Target, err)
			}
		}
	}
	return syscall.Exec(path, append([]string{path}, args...), env)
}
