package netpol

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Cgroups holds one cgroup v2 per pod, under one directory per cluster:
// <cgroup2 mount>/kafkachaos-<tag>/<pod UID>. The pod cgroups are at level
// 2 of the hierarchy, the level the marking rule reads.
type Cgroups struct {
	// Dir is the cluster's directory.
	Dir string
}

// podLevel is the depth of a pod's cgroup below the cgroup2 root.
const podLevel = 2

// OpenCgroups creates the cluster's cgroup directory for tag (see Tag).
// It fails when the host has no writable cgroup v2 hierarchy.
func OpenCgroups(tag string) (*Cgroups, error) {
	dir, err := ClusterCgroupDir(tag)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("netpol: cgroup: %w", err)
	}
	return &Cgroups{Dir: dir}, nil
}

// Open creates the pod's cgroup if needed and returns a directory file
// descriptor for SysProcAttr.CgroupFD (the caller closes it) and the mark
// of the pod's connections.
func (c *Cgroups) Open(podUID string) (fd int, mark uint32, err error) {
	dir := filepath.Join(c.Dir, podUID)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return -1, 0, fmt.Errorf("netpol: cgroup of pod %s: %w", podUID, err)
	}
	fd, err = syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("netpol: cgroup of pod %s: %w", podUID, err)
	}
	mark, err = c.Mark(podUID)
	if err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	return fd, mark, nil
}

// Mark returns the mark of a pod's connections: the low 32 bits of its
// cgroup's ID (the directory's inode number), as the marking rule copies
// them. 0 means the pod has no cgroup.
func (c *Cgroups) Mark(podUID string) (uint32, error) {
	id, err := cgroupID(filepath.Join(c.Dir, podUID))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return markOf(id), err
}

// Remove deletes a pod's cgroup, killing what is still in it first (a
// process that left the container's process group, an exec).
func (c *Cgroups) Remove(podUID string) error {
	if err := killAll(filepath.Join(c.Dir, podUID)); err != nil {
		return fmt.Errorf("netpol: remove cgroup of pod %s: %w", podUID, err)
	}
	return nil
}

// RemoveAll deletes every pod cgroup and the cluster's directory. A process
// still in a pod's cgroup is killed first (cgroup.kill); a cgroup that still
// holds one after that is left, and named in the error.
func RemoveAll(tag string) error {
	dir, err := ClusterCgroupDir(tag)
	if err != nil {
		return nil // no hierarchy, nothing was made
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			if err := killAll(filepath.Join(dir, e.Name())); err != nil {
				errs = append(errs, fmt.Errorf("netpol: remove cgroup %s: %w", e.Name(), err))
			}
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		errs = append(errs, fmt.Errorf("netpol: remove cgroup %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// killAll kills every process in a cgroup and removes it once empty.
func killAll(dir string) error {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	ctx, cancel := context.WithTimeout(context.Background(), cgroupEmptyTimeout)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		err := syscall.Rmdir(dir)
		return err == nil || errors.Is(err, syscall.ENOENT), nil
	})
}

// cgroupEmptyTimeout is how long killed processes get to leave a cgroup.
const cgroupEmptyTimeout = 5 * time.Second

// ClusterCgroupDir is where the cluster of tag keeps its pods' cgroups.
func ClusterCgroupDir(tag string) (string, error) {
	root, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "kafkachaos-"+tag), nil
}

func cgroupID(dir string) (uint64, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, fmt.Errorf("netpol: cgroup: %w", err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino, nil
}

// markOf is what `ct mark set` keeps of an 8-byte cgroup ID in a register:
// its first 4 bytes in memory.
func markOf(id uint64) uint32 {
	b := binary.NativeEndian.AppendUint64(nil, id)
	return binary.NativeEndian.Uint32(b[:4])
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup
// on a unified host, /sys/fs/cgroup/unified on a hybrid one.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("netpol: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source ...
		fields := strings.Fields(sc.Text())
		for i, x := range fields {
			if x == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				if fields[3] != "/" {
					// The marking rule counts cgroup levels from the
					// hierarchy's true root; under a cgroup namespace or a
					// mounted sub-tree they would not be 1 and 2.
					return "", fmt.Errorf("netpol: the cgroup v2 hierarchy is mounted from %s, not its root (a cgroup namespace?): the local cluster cannot enforce NetworkPolicy here", fields[3])
				}
				return fields[4], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("netpol: mountinfo: %w", err)
	}
	return "", errors.New("netpol: no cgroup v2 hierarchy is mounted; the local cluster cannot enforce NetworkPolicy without one")
}
