package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafkachaos/kafkachaos/javaload"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// start creates a tool's pod and follows its events into fn until the
// tool ends (or the workload does); awaitEnd then says how it ended.
func (j *javaClients) start(ctx context.Context, pod *corev1.Pod, fn func(javaclients.Event)) error {
	if err := javaload.CreatePod(ctx, j.env.admin(), pod); err != nil {
		return err
	}
	t := &toolRun{done: make(chan struct{})}
	j.mu.Lock()
	j.tools[pod.Name] = t
	j.mu.Unlock()
	go func() {
		defer close(t.done)
		t.err = javaload.Follow(j.follow, j.env.admin(), pod.Namespace, pod.Name, fn)
	}()
	return nil
}

// toolRun is a followed tool: done is closed when it ended, err then says
// whether its events were read whole.
type toolRun struct {
	done chan struct{}
	err  error
}

// over reports whether the tool ended.
func (t *toolRun) over() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// ends says which tools have ended, and how, for an error message.
func (j *javaClients) ends() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for name, t := range j.tools {
		if t.over() {
			out = append(out, fmt.Sprintf("%s ended: %v", name, t.err))
		}
	}
	if len(out) == 0 {
		return "every tool still runs"
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// stop stops pod and waits until its tool ended.
func (j *javaClients) stop(ctx context.Context, pod string) error {
	if err := javaload.Stop(ctx, j.env.admin(), j.spec.Namespace, pod); err != nil {
		return err
	}
	return j.awaitEnd(ctx, pod)
}

// awaitEnd waits until the tool of pod ended; a follow that failed goes
// to j.failed, once.
func (j *javaClients) awaitEnd(ctx context.Context, pod string) error {
	j.mu.Lock()
	t := j.tools[pod]
	j.mu.Unlock()
	if t == nil {
		return fmt.Errorf("scenario: no Java tool was started in pod %s", pod)
	}
	select {
	case <-t.done:
		j.mu.Lock()
		defer j.mu.Unlock()
		if t.err != nil && !slices.Contains(j.failed, t.err.Error()) {
			j.failed = append(j.failed, t.err.Error())
		}
		return nil
	case <-time.After(javaStopTimeout):
		return fmt.Errorf("scenario: the tool of pod %s did not end within %s of its stop", pod, javaStopTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// over reports whether the tool of pod has ended (or never started).
func (j *javaClients) over(pod string) bool {
	j.mu.Lock()
	t := j.tools[pod]
	j.mu.Unlock()
	return t == nil || t.over()
}

// producer is the running producer's pod.
func (j *javaClients) producer() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.spec.ProducerName(j.incarnation)
}

// nextProducer starts the next incarnation of the producer, unless the
// workload is finishing.
func (j *javaClients) nextProducer(ctx context.Context) (string, error) {
	j.mu.Lock()
	if j.finished {
		j.mu.Unlock()
		return "", ErrNoJava
	}
	j.incarnation++
	pod := j.spec.ProducerPod(j.incarnation)
	j.mu.Unlock()
	return pod.Name, j.start(ctx, pod, j.producerEvent)
}
