package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// KindStop is the ledger kind of a stop, on the Pod whose container was
// given the pause image; its data keeps the container and its image.
const KindStop = "stop"

// DefaultPauseImage is what a stopped container runs unless told another:
// the Kubernetes pause image that containerd 2.x uses for its sandboxes,
// so most nodes hold it already. An air-gapped cluster gives its mirror's
// (Stop.PauseImage).
const DefaultPauseImage = "registry.k8s.io/pause:3.10"

// Stop keeps brokers down without deleting their pods, as Chaos Mesh's
// pod-failure does: each pod's container image is changed in place (the
// one field of a running pod's containers the API lets change) to a pause
// image. The kubelet then stops the broker with the pod's grace period, a
// clean shutdown, and runs the pause image instead: with no command of its
// own the container sleeps, Running (and not Ready, where its readiness
// probe needs the broker); with a command the image lacks it crash-loops. Either way the broker stays down, in the
// same pod with the same volume, until Recover gives the image back and
// the kubelet starts the broker again. Its StatefulSet does not interfere:
// the pod keeps its revision label, so the controller neither replaces nor
// "fixes" it.
//
// With Hard the broker's JVM is killed first (SIGKILL through pods/exec,
// as Kafka's own tests' clean_shutdown=False does), so it gets no
// controlled shutdown; the container may restart before the image is
// changed, and is then stopped again.
//
// The ledger entry is written in the same patch that changes the image,
// on the pod's resourceVersion, so `kafkachaos recover` gives the image
// back after a run that was killed.
type Stop struct {
	Scope
	// Exec reaches the containers (NewExec); needed only with Hard.
	Exec Exec
	// Pods are the brokers' pods, stopped in this order.
	Pods []string
	// RestartOrder is the order Recover restarts them in; empty: Pods'.
	// It must name each pod of Pods once.
	RestartOrder []string
	// Container is the broker's container; empty means each pod's first.
	Container string
	// PauseImage is what the stopped containers run; empty means
	// DefaultPauseImage.
	PauseImage string
	// Hard kills each JVM before its image is changed.
	Hard bool
	// Restarted, when set, runs in Recover after each pod's image is given
	// back and before the next pod's: a story waits there until the broker
	// is back (Ready, in every ISR), as Kafka's tests restart brokers one
	// by one. An error stops Recover, which can be called again: it then
	// waits for that pod first, before it gives the next its image back.
	Restarted func(ctx context.Context, pod string) error

	// stopped is, by pod, what the stop replaced: the container's image
	// and ID, to tell when the pause image runs in its place (Down).
	stopped map[string]stopTarget
	// unawaited are the pods given their image back whose Restarted has
	// not yet returned nil.
	unawaited map[string]bool
}

var _ Fault = (*Stop)(nil)

func (f *Stop) pauseImage() string { return cmp.Or(f.PauseImage, DefaultPauseImage) }

func (f *Stop) restartOrder() []string {
	if len(f.RestartOrder) > 0 {
		return f.RestartOrder
	}
	return f.Pods
}

// Name implements Fault.
func (f *Stop) Name() string {
	how := "clean"
	if f.Hard {
		how = "hard"
	}
	return fmt.Sprintf("stop pods %s/%s (%s; kept down on %s)", f.Namespace, strings.Join(f.Pods, ","), how, f.pauseImage())
}

// Plan says what Inject does.
func (f *Stop) Plan() string {
	kill := ""
	if f.Hard {
		kill = "SIGKILL the Kafka JVM through pods/exec, then "
	}
	return fmt.Sprintf("for pod %s of %s in turn: %schange its container's image to %s in the patch that writes a %s ledger entry, so the kubelet stops it (grace period) and keeps it down; recovery gives each image back, in the order %s",
		strings.Join(f.Pods, ", "), f.Namespace, kill, f.pauseImage(), KindStop, strings.Join(f.restartOrder(), ", "))
}

// invalid checks the fault's own fields.
func (f *Stop) invalid() error {
	sorted := slices.Sorted(slices.Values(f.Pods))
	switch {
	case len(f.Pods) == 0:
		return errors.New("chaos: stop: no pods")
	case len(slices.Compact(slices.Clone(sorted))) != len(sorted):
		return fmt.Errorf("chaos: stop: pods %v name one twice", f.Pods)
	case len(f.RestartOrder) > 0 && !slices.Equal(slices.Sorted(slices.Values(f.RestartOrder)), sorted):
		return fmt.Errorf("chaos: stop: restart order %v must name each of pods %v once", f.RestartOrder, f.Pods)
	case f.Hard && f.Exec == nil:
		return errors.New("chaos: stop: a hard stop kills the JVM through pods/exec, and no exec was given")
	}
	return nil
}

// Inject implements Fault. Every pod is read first: one missing, already
// stopped, or already on the pause image fails it before any change, in
// a dry run too.
func (f *Stop) Inject(ctx context.Context) error { return f.inject(ctx, f.invalid(), f.look) }

// stopTarget is one pod to stop: its container, the image to restore, and
// the ID of the container it ran when the stop was written.
type stopTarget struct{ pod, container, image, containerID string }

func (f *Stop) look(ctx context.Context) (string, func(context.Context) error, error) {
	var targets []stopTarget
	for _, name := range f.Pods {
		pod, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
		}
		es, err := LedgerOf(pod)
		if err != nil {
			return "", nil, err
		}
		if e, ok := entryOf(es, KindStop); ok {
			return "", nil, fmt.Errorf("chaos: %s: pod %s is stopped already (%s): recover it first", f.Name(), name, e)
		}
		c, err := stopContainer(pod, f.Container)
		if err != nil {
			return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
		}
		if c.Image == f.pauseImage() {
			return "", nil, fmt.Errorf("chaos: %s: pod %s's container %s runs %s already, with no %s entry: someone else stopped it", f.Name(), name, c.Name, c.Image, KindStop)
		}
		targets = append(targets, stopTarget{pod: name, container: c.Name, image: c.Image})
	}
	return f.Plan(), func(ctx context.Context) error {
		for _, t := range targets {
			if err := f.stop(ctx, t); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// stopContainer is pod's container name, or its first when name is empty.
func stopContainer(pod *corev1.Pod, name string) (corev1.Container, error) {
	for _, c := range pod.Spec.Containers {
		if name == "" || c.Name == name {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("pod %s has no container %q", pod.Name, name)
}

// stop kills t's JVM if hard, then changes its image and writes the entry
// in one patch.
func (f *Stop) stop(ctx context.Context, t stopTarget) error {
	if f.Hard {
		pids, err := f.Exec(ctx, f.Namespace, t.pod, t.container, []string{"sh", "-c", signalJVM, "stop", "KILL", BrokerMainClass})
		if err != nil {
			return fmt.Errorf("chaos: %s: killing pod %s's JVM: %w", f.Name(), t.pod, err)
		}
		f.say("%s: killed PID %s of pod %s", f.Name(), strings.TrimSpace(pids), t.pod)
	}
	e := Entry{Fault: KindStop, RunID: f.RunID, At: time.Now(), Undo: fmt.Sprintf("give container %s its image %s back", t.container, t.image),
		Data: map[string]string{"container": t.container, "image": t.image, "pauseImage": f.pauseImage()}}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, t.pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		es, err := LedgerOf(pod)
		if err != nil {
			return err
		}
		// The pod as it was read before: the entry must name what the
		// patch replaces.
		c, err := stopContainer(pod, t.container)
		if _, stopped := entryOf(es, KindStop); err != nil || stopped || c.Image != t.image {
			return fmt.Errorf("pod %s changed since it was read (its container %s runs %s, stopped already: %t): %w", t.pod, t.container, c.Image, stopped, err)
		}
		t.containerID = containerID(pod, t.container)
		meta, err := metaPatch(pod, withEntry(es, e))
		if err != nil {
			return err
		}
		return patch(ctx, f.Client, f.Namespace, t.pod, "pods", map[string]any{"metadata": meta,
			"spec": podContainersPatch(map[string]map[string]any{t.container: {"image": f.pauseImage()}})})
	})
	if err != nil {
		return fmt.Errorf("chaos: %s: pod %s: %w", f.Name(), t.pod, err)
	}
	if f.stopped == nil {
		f.stopped = map[string]stopTarget{}
	}
	f.stopped[t.pod] = t
	f.say("%s: pod %s's container %s now runs %s", f.Name(), t.pod, t.container, f.pauseImage())
	return nil
}

// Recover implements Fault: each pod's image given back, in the restart
// order, each followed by Restarted. A pod with no stop entry (recovered
// already, or never stopped) is passed over, unless its Restarted failed
// in an earlier call: that one is awaited again before the next pod.
func (f *Stop) Recover(ctx context.Context) error {
	if f.Client == nil {
		return errors.New("chaos: stop: scope has no client")
	}
	for _, pod := range f.restartOrder() {
		restored := false
		err := f.recoverOn(ctx, f.Name(), Access{}, onPod, pod, func(e Entry) bool {
			restored = restored || e.Fault == KindStop
			return e.Fault == KindStop
		})
		if err != nil {
			return err
		}
		if f.DryRun || f.Restarted == nil {
			continue
		}
		if f.unawaited == nil {
			f.unawaited = map[string]bool{}
		}
		if restored {
			f.unawaited[pod] = true
		}
		if f.unawaited[pod] {
			if err := f.Restarted(ctx, pod); err != nil {
				return fmt.Errorf("chaos: %s: after restarting pod %s: %w", f.Name(), pod, err)
			}
			delete(f.unawaited, pod)
		}
	}
	return nil
}

// Down reports, for each pod, whether it is held down: its container's
// image is the pause image, and the container that runs is no longer the
// one the stop replaced (another container ID, not on the old image). It
// changes nothing. Readiness is not asked: a container without a
// readiness probe is Ready on the pause image too.
func (f *Stop) Down(ctx context.Context) (map[string]bool, error) {
	if f.Client == nil {
		return nil, errors.New("chaos: stop: scope has no client")
	}
	down := map[string]bool{}
	for _, name := range f.Pods {
		pod, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
		}
		t, stopped := f.stopped[name]
		c, err := stopContainer(pod, t.container)
		if err != nil {
			return nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
		}
		replaced := false
		for _, s := range pod.Status.ContainerStatuses {
			replaced = replaced || (s.Name == c.Name && s.ContainerID != t.containerID && s.Image != t.image)
		}
		down[name] = stopped && c.Image == f.pauseImage() && replaced
	}
	return down, nil
}

// containerID is the ID of container name's status in pod, or "".
func containerID(pod *corev1.Pod, name string) string {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == name {
			return s.ContainerID
		}
	}
	return ""
}

// stopLedger is KindStop's row of the registry: on a Pod, with the other
// pod entries.
func stopLedger() ledgerKind {
	return ledgerKind{kind: KindStop, object: onPod, order: orderPods, undo: undoStop}
}

// undoStop gives the entry's container its image back, in the patch that
// removes the entry. A container whose image someone changed since (to
// neither the pause image nor the original) is left as it is, and said so.
func undoStop(_ context.Context, u *undo, e Entry) (string, bool, error) {
	pod, err := object[*corev1.Pod](u)
	if err != nil {
		return "", false, err
	}
	name, image := e.Data["container"], e.Data["image"]
	c, err := stopContainer(pod, name)
	if err != nil {
		return "", true, fmt.Errorf("a %s entry names container %q: %w", KindStop, name, err)
	}
	if image == "" {
		return "", true, fmt.Errorf("a %s entry names container %q and no image to give back", KindStop, name)
	}
	switch c.Image {
	case image:
		return fmt.Sprintf("container %s runs its image %s already", name, image), false, nil
	case e.Data["pauseImage"]:
		u.container(name)["image"] = image
		return fmt.Sprintf("give container %s its image %s back", name, image), false, nil
	}
	return fmt.Sprintf("leave container %s on %s, which is neither the pause image nor its image %s: someone changed it since", name, c.Image, image), false, nil
}

// podContainersPatch is the spec part of a pod's strategic merge patch
// that sets the given fields of its containers, by name.
func podContainersPatch(fields map[string]map[string]any) map[string]any {
	return map[string]any{"containers": containerList(fields)}
}
