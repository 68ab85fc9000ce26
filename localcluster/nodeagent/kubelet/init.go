package kubelet

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// start runs the pod's init containers one after another, each to
// success, then starts its app containers, as a kubelet does. A failed
// init container is restarted with back-off, unless the pod's restart
// policy is Never, which fails the pod. Init containers run once per pod:
// an app container restarted in place does not run them again (a pod
// deleted and recreated does).
func (p *podRun) start(rt runtimes, env func(corev1.Container) []string) {
	for _, c := range p.inits {
		if c.spec.RestartPolicy != nil && *c.spec.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar (KEP-753) would never exit: say why nothing starts.
			p.setWaiting(c, "CreateContainerConfigError", "init container "+c.spec.Name+" is a sidecar (restartPolicy: Always), which this node agent does not run")
			return
		}
		backoff := restartBackoffStart
		for {
			code, err := p.runOnce(c, rt, env(c.spec))
			if err != nil || p.stopping() {
				return // a waiting reason was set, or the pod is going
			}
			if code == 0 {
				break
			}
			if p.pod.Spec.RestartPolicy == corev1.RestartPolicyNever || !p.backOff(c, &backoff) {
				return
			}
		}
	}
	p.mu.Lock()
	for _, c := range p.ctrs {
		c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	}
	p.mu.Unlock()
	p.changed()
	for i := range p.ctrs {
		go p.supervise(i, rt, env(p.ctrs[i].spec))
	}
}

// stopping reports whether the pod is being deleted.
func (p *podRun) stopping() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// backOff waits before container c is restarted, in CrashLoopBackOff, and
// doubles the next wait; a new image ends the wait. It returns false if the
// pod is deleted meanwhile.
func (p *podRun) backOff(c *ctrRun, backoff *time.Duration) bool {
	p.mu.Lock()
	c.last = c.state
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "CrashLoopBackOff", Message: fmt.Sprintf("back-off %s restarting failed container %s", *backoff, c.spec.Name)}}
	p.mu.Unlock()
	p.changed()
	t := time.NewTimer(*backoff)
	defer t.Stop()
wait:
	for {
		select {
		case <-p.stop:
			return false
		case <-c.wake: // a new image: restart now
			if p.takeReplaced(c) {
				break wait
			}
		case <-t.C:
			break wait
		}
	}
	*backoff = min(*backoff*2, restartBackoffMax)
	p.mu.Lock()
	c.restarts++
	p.mu.Unlock()
	return true
}

// initStatusLocked is what the pod's init containers say about it: their
// statuses, whether all completed, and whether one failed for good.
func (p *podRun) initStatusLocked() (statuses []corev1.ContainerStatus, initialized, failed bool) {
	initialized = true
	for _, c := range p.inits {
		t := c.state.Terminated
		done := t != nil && t.ExitCode == 0
		statuses = append(statuses, c.status(done))
		initialized = initialized && done
		failed = failed || (t != nil && t.ExitCode != 0 && p.pod.Spec.RestartPolicy == corev1.RestartPolicyNever)
	}
	return statuses, initialized, failed
}
