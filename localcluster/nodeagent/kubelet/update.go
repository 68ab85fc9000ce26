package kubelet

import (
	"context"
	"fmt"
	"maps"
	"path"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafkachaos/kafkachaos/manifests"
)

// UpdatePod implements node.PodLifecycleHandler. Of a pod's containers the
// API lets only the image change, and a kubelet restarts a container whose
// image changed: it stops the old process with the pod's grace period
// (SIGTERM, then SIGKILL) and starts the new image in the same pod, same
// UID, same volumes, its restart count one higher. This agent does the
// same for app containers (an init container's new image matters only to
// a pod not yet initialized, and is taken when it runs). That is how a
// fault keeps a broker down without deleting its pod (chaos.Stop): its
// image becomes a pause image, and back.
func (p *provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	run, ok := p.pods[key(pod.Namespace, pod.Name)]
	p.mu.Unlock()
	if !ok || run.pod.UID != pod.UID {
		return nil
	}
	run.syncMeta(pod)
	grace := defaultGrace
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	for _, c := range pod.Spec.Containers {
		run.setImage(c.Name, c.Image, grace)
	}
	return nil
}

// syncMeta takes pod's labels and annotations into the agent's copy. The
// node library calls UpdatePod only when the pod it reads from the API
// differs from the provider's copy (GetPod) in its images, labels or
// annotations: a copy that kept its old metadata, or its old image, would
// hide the next change from it (an image given back after a stop, with
// the ledger entry removed, looked equal to the copy made at creation).
func (p *podRun) syncMeta(pod *corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pod.Labels = maps.Clone(pod.Labels)
	p.pod.Annotations = maps.Clone(pod.Annotations)
}

// setImage gives app container name a new image: its process, if one
// runs, is stopped within grace, and its supervisor starts the new image
// at once, without a back-off.
func (p *podRun) setImage(name, image string, grace time.Duration) {
	p.mu.Lock()
	var c *ctrRun
	for _, x := range p.ctrs {
		if x.spec.Name == name {
			c = x
		}
	}
	if c == nil || c.spec.Image == image {
		p.mu.Unlock()
		return
	}
	c.spec.Image, c.replaced, c.grace = image, true, grace
	for i := range p.pod.Spec.Containers {
		if p.pod.Spec.Containers[i].Name == name {
			p.pod.Spec.Containers[i].Image = image
		}
	}
	pid, done := 0, c.done
	if c.state.Running != nil {
		pid = c.pid()
	}
	p.mu.Unlock()
	c.wakeUp()
	if pid > 0 {
		go stopGroup(pid, done, grace)
	}
	p.changed()
}

// stopGroup sends SIGTERM to process group pid, and SIGKILL if it has not
// ended (done closed) within grace.
func stopGroup(pid int, done <-chan struct{}, grace time.Duration) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// wakeUp ends a wait of c's supervisor (a back-off, or an image with no
// runtime): its image changed.
func (c *ctrRun) wakeUp() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// takeReplaced reports whether c's image changed since its supervisor last
// looked, and clears the mark. A replaced container restarts at once and
// counts a restart, as on a kubelet.
func (p *podRun) takeReplaced(c *ctrRun) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.replaced {
		return false
	}
	c.replaced = false
	select { // the change is taken: its wake-up must not end a later wait
	case <-c.wake:
	default:
	}
	if c.state.Terminated != nil {
		c.last = c.state
		c.restarts++
	}
	return true
}

// waitImage waits until c's image changes (true, the change taken) or the
// pod is deleted.
func (p *podRun) waitImage(c *ctrRun) bool {
	for {
		select {
		case <-p.stop:
			return false
		case <-c.wake:
			if p.takeReplaced(c) {
				return true
			}
		}
	}
}

// IsPauseImage reports whether image is a Kubernetes pause image
// (registry.k8s.io/pause, a mirror's .../pause): what chaos.Stop runs in
// a stopped broker's container.
func IsPauseImage(image string) bool {
	repo, _ := manifests.SplitImage(image)
	return path.Base(repo) == "pause"
}

// pauseRuntime runs a pause image as a node would. The image holds one
// program, /pause, which sleeps until signalled: a container that gives
// no command runs it, and is Running, but never Ready unless its probe
// passes without its application. A container whose command names
// anything else cannot start (the runtime finds no such file in the
// image), and crash-loops.
type pauseRuntime struct{}

func (pauseRuntime) command(c corev1.Container) (string, []string, error) {
	if len(c.Command) == 0 {
		return "sleep", []string{"infinity"}, nil
	}
	msg := fmt.Sprintf("exec: %q: no such file or directory in the pause image", c.Command[0])
	return "sh", []string{"-c", "echo " + shellQuote(msg) + " >&2; exit 128"}, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
