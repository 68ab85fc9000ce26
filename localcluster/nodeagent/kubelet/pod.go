// A file over 400 lines: one pod's whole life as processes (status,
// supervision, restarts, probes, kill) shares its lock and state.

package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/internal/pidfile"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/sandbox"
)

// Restart back-off, as the kubelet's (10 s doubling to 5 min), but shorter:
// chaos tests wait on restarts.
const (
	restartBackoffStart = time.Second
	restartBackoffMax   = 30 * time.Second
	defaultGrace        = 30 * time.Second
	probeTimeout        = time.Second
)

// podRun is one pod on a node: its containers as host processes.
type podRun struct {
	mu  sync.Mutex
	pod *corev1.Pod // our copy; status is ours
	ip  string
	// inits are the init containers, run to completion before ctrs.
	inits []*ctrRun
	ctrs  []*ctrRun
	stop  chan struct{} // closed when the pod is being deleted
	// starting counts containers between cgroupFor and their Running
	// state: kill waits for them, so none starts unseen by a delete.
	starting sync.WaitGroup
	logDir   string
	notify   func(*corev1.Pod)
	// notifyMu orders status updates; finished is set once the final
	// one was sent.
	notifyMu sync.Mutex
	finished bool

	hostname string
	mounts   map[string][]sandbox.Mount // by container name
	// cgroupFD is the pod's cgroup (a directory fd) its processes start
	// in, or -1.
	cgroupFD int
	// conditions are the pod's conditions as last reported, with the time
	// each last changed.
	conditions map[corev1.PodConditionType]corev1.PodCondition
}

// cgroupFor starts the process of a in the pod's cgroup, if it has one,
// through a duplicate of the pod's fd that done closes once the process
// started: a pod deleted meanwhile closes its own fd, and the number must
// not be reused under a starting process. It fails once the pod is being
// deleted. On success the container counts as starting until the caller
// calls p.starting.Done.
func (p *podRun) cgroupFor(a *syscall.SysProcAttr) (done func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stop:
		return nil, errors.New("the pod is being deleted")
	default:
	}
	if p.cgroupFD < 0 {
		p.starting.Add(1)
		return func() {}, nil
	}
	fd, err := unix.FcntlInt(uintptr(p.cgroupFD), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cgroup fd: %w", err)
	}
	a.UseCgroupFD, a.CgroupFD = true, fd
	p.starting.Add(1)
	return func() { _ = unix.Close(fd) }, nil
}

// closeCgroup closes the cgroup fd once the pod's processes are gone.
func (p *podRun) closeCgroup() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cgroupFD >= 0 {
		_ = syscall.Close(p.cgroupFD)
		p.cgroupFD = -1
	}
}

// ctrRun is one container.
type ctrRun struct {
	spec     corev1.Container
	cmd      *exec.Cmd
	done     chan struct{}
	state    corev1.ContainerState
	last     corev1.ContainerState
	restarts int32
	ready    bool
	// replaced is set when the container's image changed (UpdatePod) and
	// its supervisor has not yet restarted it; wake tells the supervisor.
	replaced bool
	wake     chan struct{}
	grace    time.Duration // the pod's grace period, when the image last changed
}

// newCtrRun is container spec, in state.
func newCtrRun(spec corev1.Container, state corev1.ContainerState) *ctrRun {
	return &ctrRun{spec: spec, state: state, wake: make(chan struct{}, 1)}
}

func (p *podRun) logPath(c string) string { return filepath.Join(p.logDir, c+".log") }
func (p *podRun) pidPath(c string) string { return filepath.Join(p.logDir, c+".pid") }

// snapshot returns a copy of the pod with its current status.
func (p *podRun) snapshot() *corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snapshotLocked()
}

func (p *podRun) snapshotLocked() *corev1.Pod {
	pod := p.pod.DeepCopy()
	st := &pod.Status
	st.HostIP, st.PodIP = hostIP, p.ip
	st.HostIPs = []corev1.HostIP{{IP: hostIP}}
	st.PodIPs = []corev1.PodIP{{IP: p.ip}}
	st.ContainerStatuses = nil
	var initialized, initFailed bool
	st.InitContainerStatuses, initialized, initFailed = p.initStatusLocked()
	allReady, allRunning, anyFailed, allDone := true, true, false, true
	for _, c := range p.ctrs {
		st.ContainerStatuses = append(st.ContainerStatuses, c.status(c.ready))
		allReady = allReady && c.ready
		allRunning = allRunning && c.state.Running != nil
		// A terminated container that will be restarted is not done:
		// the pod stays Running through a CrashLoopBackOff, as on a kubelet.
		if t := c.state.Terminated; t != nil && !willRestart(p.pod.Spec.RestartPolicy, t.ExitCode) {
			anyFailed = anyFailed || t.ExitCode != 0
		} else {
			allDone = false
		}
	}
	switch {
	case initFailed:
		st.Phase = corev1.PodFailed
	case !initialized:
		st.Phase = corev1.PodPending
	case allDone && anyFailed:
		st.Phase = corev1.PodFailed
	case allDone:
		st.Phase = corev1.PodSucceeded
	case allRunning || anyStarted(p.ctrs):
		st.Phase = corev1.PodRunning
	default:
		st.Phase = corev1.PodPending
	}
	// A condition's LastTransitionTime moves only when its status does,
	// as a kubelet's: the StatefulSet controller's minReadySeconds counts
	// from it.
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
		}
		if p.conditions == nil {
			p.conditions = map[corev1.PodConditionType]corev1.PodCondition{}
		}
		c, seen := p.conditions[t]
		if !seen || c.Status != s {
			c = corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.Now()}
			p.conditions[t] = c
		}
		return c
	}
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodScheduled, true),
		cond(corev1.PodInitialized, initialized),
		cond(corev1.ContainersReady, allReady && allRunning),
		cond(corev1.PodReady, allReady && allRunning),
	}
	return pod
}

func willRestart(policy corev1.RestartPolicy, code int32) bool {
	return policy == corev1.RestartPolicyAlways || policy == "" || (policy == corev1.RestartPolicyOnFailure && code != 0)
}

func anyStarted(cs []*ctrRun) bool {
	for _, c := range cs {
		if c.state.Running != nil || c.state.Terminated != nil {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// status is the container's status as the pod reports it, ready or not.
func (c *ctrRun) status(ready bool) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name: c.spec.Name, Image: c.spec.Image, ImageID: c.spec.Image, RestartCount: c.restarts,
		State: c.state, LastTerminationState: c.last, Ready: ready,
		Started: ptr(c.state.Running != nil),
	}
	if c.state.Running != nil {
		cs.ContainerID = "process://" + strconv.Itoa(c.pid())
	}
	return cs
}

func (c *ctrRun) pid() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// changed reports the new status to the node's pod controller, unless the
// pod's final status was sent: the node library knows pods by name, and a
// late update would land on a pod recreated under the same name.
func (p *podRun) changed() {
	p.notifyMu.Lock()
	defer p.notifyMu.Unlock()
	if p.notify != nil && !p.finished {
		p.notify(p.snapshot())
	}
}

// finish sends the pod's final status through notify, its last.
func (p *podRun) finish(final *corev1.Pod, notify func(*corev1.Pod)) {
	p.notifyMu.Lock()
	defer p.notifyMu.Unlock()
	p.finished = true
	if notify != nil {
		notify(final)
	}
}

// supervise runs app container i until the pod is deleted, restarting it
// as the restart policy says, and at once when its image changes. A
// container that cannot start (its image has no runtime here) or ended for
// good waits for a new image.
func (p *podRun) supervise(i int, rt runtimes, env []string) {
	c := p.ctrs[i]
	p.takeReplaced(c) // an image set before it started is the one it runs
	backoff := restartBackoffStart
	for {
		exitCode, err := p.runOnce(c, rt, env)
		if p.stopping() {
			return
		}
		switch {
		case p.takeReplaced(c):
			backoff = restartBackoffStart
		case err != nil || !willRestart(p.pod.Spec.RestartPolicy, exitCode):
			if !p.waitImage(c) {
				return
			}
		case !p.backOff(c, &backoff):
			return
		}
	}
}

// runOnce starts the container's process and waits for it to exit. An error
// means it could not start; the container then waits with a reason.
func (p *podRun) runOnce(c *ctrRun, rt runtimes, env []string) (int32, error) {
	p.mu.Lock()
	spec := c.spec // the image may change meanwhile (setImage): started is checked against it
	p.mu.Unlock()
	r, why := rt.lookup(spec.Image)
	var path string
	var args []string
	var err error
	if r != nil {
		path, args, err = r.command(withExpandedArgs(spec))
		if err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		p.mu.Lock()
		c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: errNoRuntime, Message: why}}
		p.mu.Unlock()
		p.changed()
		return 0, errors.New(why)
	}
	logf, err := os.OpenFile(p.logPath(c.spec.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.setWaiting(c, "CreateContainerError", err.Error())
		return 0, err
	}
	if !filepath.IsAbs(path) {
		if path, err = exec.LookPath(path); err != nil {
			logf.Close()
			p.setWaiting(c, "StartError", err.Error())
			return 0, err
		}
	}
	// kafkachaos-node pod-exec enters the pod's namespaces (hostname, volumes)
	// and then execs the program, so the pid is the program's.
	sb := sandbox.Sandbox{Hostname: p.hostname, Scratch: filepath.Join(p.logDir, "scratch", c.spec.Name), WorkDir: c.spec.WorkingDir, Mounts: p.mounts[c.spec.Name]}
	cmd := exec.Command(rt.node, sb.Args(path, args)...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a signal reaches everything it started;
	// it dies with the agent, so nothing is orphaned if the agent crashes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: sandbox.Namespaces}
	inCgroup, err := p.cgroupFor(cmd.SysProcAttr)
	if err != nil {
		logf.Close()
		return 0, err // deleted meanwhile: nothing to start
	}
	err = cmd.Start()
	inCgroup()
	if err != nil {
		p.starting.Done()
		logf.Close()
		p.setWaiting(c, "StartError", err.Error())
		return 0, err
	}
	// Recorded so that `cluster down` can kill it even if the agent
	// crashed without taking it along.
	_ = pidfile.Write(p.pidPath(c.spec.Name), cmd.Process.Pid)
	done := make(chan struct{})
	p.mu.Lock()
	c.cmd, c.done = cmd, done
	c.ready = c.spec.ReadinessProbe == nil
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	// The image changed while this one started: setImage saw no process
	// to stop, so stop it now, as it would have.
	stale, grace := c.spec.Image != spec.Image, c.grace
	p.mu.Unlock()
	if stale {
		go stopGroup(cmd.Process.Pid, done, grace)
	}
	p.starting.Done() // a delete's kill now sees it running
	p.changed()
	if c.spec.ReadinessProbe != nil {
		go p.probe(c, done)
	}

	werr := cmd.Wait()
	logf.Close()
	_ = os.Remove(p.pidPath(c.spec.Name))
	code := int32(0)
	reason := "Completed"
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int32(ws.Signal())
		} else {
			code = int32(ee.ExitCode())
		}
	}
	if code != 0 {
		reason = "Error"
	}
	p.mu.Lock()
	started := c.state.Running
	c.ready = false
	term := &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: metav1.Now(), ContainerID: "process://" + strconv.Itoa(cmd.Process.Pid)}
	if started != nil {
		term.StartedAt = started.StartedAt
	}
	c.state = corev1.ContainerState{Terminated: term}
	p.mu.Unlock()
	close(done)
	p.changed()
	return code, nil
}

func (p *podRun) setWaiting(c *ctrRun, reason, msg string) {
	p.mu.Lock()
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	p.mu.Unlock()
	p.changed()
}

// probe runs the container's readiness probe until the process exits.
func (p *podRun) probe(c *ctrRun, done <-chan struct{}) {
	pr := c.spec.ReadinessProbe
	period := time.Duration(max(pr.PeriodSeconds, 1)) * time.Second
	if d := time.Duration(pr.InitialDelaySeconds) * time.Second; d > 0 {
		select {
		case <-done:
			return
		case <-time.After(d):
		}
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		ok := p.probeOnce(pr, c)
		p.mu.Lock()
		was := c.ready
		if c.state.Running != nil {
			c.ready = ok
		}
		now := c.ready
		p.mu.Unlock()
		if was != now {
			p.changed()
		}
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// probeOnce runs one check: tcpSocket and httpGet against the pod's IP, exec
// inside the container's namespaces (nsenter into its mount and UTS
// namespaces), with the container's environment.
func (p *podRun) probeOnce(pr *corev1.Probe, c *ctrRun) bool {
	switch {
	case pr.Exec != nil && len(pr.Exec.Command) > 0:
		timeout := time.Duration(max(pr.TimeoutSeconds, 1)) * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd, err := p.execCommand(ctx, c.spec.Name, pr.Exec.Command)
		return err == nil && p.runInPod(cmd) == nil
	case pr.TCPSocket != nil:
		port := pr.TCPSocket.Port.IntValue()
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(p.ip, strconv.Itoa(port)), probeTimeout)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	case pr.HTTPGet != nil:
		url := fmt.Sprintf("http://%s%s", net.JoinHostPort(p.ip, strconv.Itoa(pr.HTTPGet.Port.IntValue())), pr.HTTPGet.Path)
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode >= 200 && resp.StatusCode < 400
	}
	return false
}

// kill ends every container: SIGTERM to each process group, then SIGKILL
// once grace has passed (at once when grace is 0).
func (p *podRun) kill(grace time.Duration) {
	// A container that passed cgroupFor before stop was closed is still
	// starting: wait until it runs, so it is killed too. None can begin
	// starting once stop is closed, which the callers did.
	p.starting.Wait()
	p.mu.Lock()
	var running []*ctrRun
	for _, c := range append(append([]*ctrRun(nil), p.inits...), p.ctrs...) {
		if c.state.Running != nil && c.cmd != nil {
			running = append(running, c)
		}
	}
	p.mu.Unlock()
	sig := syscall.SIGTERM
	if grace <= 0 {
		sig = syscall.SIGKILL
	}
	for _, c := range running {
		_ = syscall.Kill(-c.pid(), sig)
	}
	deadline := time.NewTimer(max(grace, 0))
	defer deadline.Stop()
	for _, c := range running {
		select {
		case <-c.done:
		case <-deadline.C:
			for _, c := range running {
				_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
			}
			for _, c := range running {
				<-c.done
			}
			return
		}
	}
}
