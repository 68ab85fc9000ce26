package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	utilexec "k8s.io/utils/exec"
)

// Exec in a container, for exec probes and for `kubectl exec` (pods/exec,
// which the pause fault uses): the command runs inside the container's
// mount and UTS namespaces (nsenter into those of its process), with the
// container's environment, like a runtime's exec. The pods share the
// host's PID namespace, so a command sees every pod's processes; its UTS
// namespace (/proc/self/ns/uts) is the pod's own, which is how a command
// can tell its pod's processes from the others'.

// execCommand returns the command that runs argv in container c of the
// pod, or an error when the container is not running.
func (p *podRun) execCommand(ctx context.Context, container string, argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errdefs.InvalidInput("exec: no command")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.ctrs {
		if c.spec.Name != container {
			continue
		}
		pid := c.pid()
		if pid == 0 || c.cmd == nil {
			return nil, errdefs.InvalidInput(fmt.Sprintf("exec: container %s is not running", container))
		}
		// --wd without a directory: the container process's working
		// directory, a path in its own filesystem.
		args := append([]string{"-t", strconv.Itoa(pid), "-m", "-u", "--wd", "--"}, argv...)
		cmd := exec.CommandContext(ctx, "nsenter", args...)
		cmd.Env = c.cmd.Env
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		return cmd, nil
	}
	return nil, errdefs.NotFound(fmt.Sprintf("exec: no container %s in pod %s/%s", container, p.pod.Namespace, p.pod.Name))
}

// RunInContainer implements nodeutil.Provider: kubectl exec without a TTY.
// A command that exits non-zero is reported with its exit code.
func (p *provider) RunInContainer(ctx context.Context, ns, name, container string, argv []string, attach api.AttachIO) error {
	if attach.TTY() {
		return errdefs.InvalidInput("exec: a TTY is not supported by the kafkachaos local node agent")
	}
	p.mu.Lock()
	run, ok := p.pods[key(ns, name)]
	p.mu.Unlock()
	if !ok {
		return errdefs.NotFound(fmt.Sprintf("exec: no pod %s/%s on this node", ns, name))
	}
	cmd, err := run.execCommand(ctx, container, argv)
	if err != nil {
		return err
	}
	if in := attach.Stdin(); in != nil {
		cmd.Stdin = in
	}
	cmd.Stdout, cmd.Stderr = orDiscard(attach.Stdout()), orDiscard(attach.Stderr())
	err = run.runInPod(cmd)
	if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) && exitErr.ExitCode() >= 0 {
		return utilexec.CodeExitError{Err: err, Code: exitErr.ExitCode()}
	}
	return err
}

// runInPod runs an exec'd command in the pod's cgroup, so its connections
// count as the pod's (NetworkPolicy), and waits for it.
func (p *podRun) runInPod(cmd *exec.Cmd) error {
	started, err := p.cgroupFor(cmd.SysProcAttr)
	if err != nil {
		return errdefs.NotFound(fmt.Sprintf("exec: %v", err))
	}
	err = cmd.Start()
	started()
	p.starting.Done() // an exec is no container: a delete need not see it run
	if err != nil {
		return err
	}
	return cmd.Wait()
}

func orDiscard(w io.WriteCloser) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
