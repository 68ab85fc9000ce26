package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	raw, err := j.evidence(pod.Name)
	if err != nil {
		return err
	}
	if err := javaload.CreatePod(ctx, j.env.admin(), pod); err != nil {
		j.keptBadly(raw.close())
		return err
	}
	t := &toolRun{done: make(chan struct{})}
	j.mu.Lock()
	j.tools[pod.Name] = t
	j.mu.Unlock()
	go func() {
		defer close(t.done)
		defer func() { j.keptBadly(raw.close()) }()
		t.err = javaload.Follow(j.follow, j.env.admin(), pod.Namespace, pod.Name, raw, fn)
	}()
	return nil
}

// evidence opens the file that keeps what the tool of pod prints, raw
// (Env.EvidenceDir); without one it keeps nothing.
func (j *javaClients) evidence(pod string) (*evidenceFile, error) {
	if j.env.EvidenceDir == "" {
		return &evidenceFile{}, nil
	}
	dir := filepath.Join(j.env.EvidenceDir, j.spec.Topic)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scenario: the Java clients' evidence: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, pod+".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("scenario: the Java clients' evidence: %w", err)
	}
	return &evidenceFile{f: f}, nil
}

// evidenceFile keeps a tool's output; a write that fails (a full disk)
// stops the keeping, not the reading of the tool's events: the evidence
// is for a reader of the report, the verdict does not depend on it.
type evidenceFile struct {
	f   *os.File // nil: keep nothing
	err error    // the first failure
}

func (e *evidenceFile) Write(b []byte) (int, error) {
	if e.f != nil && e.err == nil {
		_, e.err = e.f.Write(b)
	}
	return len(b), nil
}

// close closes the file; an error says the evidence is incomplete.
func (e *evidenceFile) close() error {
	if e.f == nil {
		return nil
	}
	if err := errors.Join(e.err, e.f.Close()); err != nil {
		return fmt.Errorf("the evidence %s is incomplete: %w", e.f.Name(), err)
	}
	return nil
}

// keptBadly notes an evidence file that is incomplete, for the outcome's
// observations.
func (j *javaClients) keptBadly(err error) {
	if err == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.notes = append(j.notes, err.Error())
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
	j.ask(pod)
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
		if t.err != nil {
			j.fail(t.err.Error())
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

// member is the pod of the member running in slot i.
func (j *javaClients) member(i int) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.spec.ConsumerName(i, j.members[i])
}

// client is the running pod of client (JavaProducer or a member's slot).
func (j *javaClients) client(client int) (string, error) {
	switch {
	case client == JavaProducer:
		return j.producer(), nil
	case client < 0 || client >= j.spec.Members:
		return "", fmt.Errorf("scenario: no Java client %d: want JavaProducer or a member from 0 to %d", client, j.spec.Members-1)
	}
	return j.member(client), nil
}

// kill kills client's pod with no grace period, waits until its events
// end, and returns it and what it had done: all the producers'
// acknowledgements so far, or the records this member read.
func (j *javaClients) kill(ctx context.Context, client int) (pod string, done int64, err error) {
	if pod, err = j.client(client); err != nil {
		return "", 0, err
	}
	at := time.Now()
	j.ask(pod)
	if err := javaload.Kill(ctx, j.env.admin(), j.spec.Namespace, pod); err != nil {
		return pod, 0, err
	}
	if err := j.awaitEnd(ctx, pod); err != nil {
		return pod, 0, err
	}
	if client == JavaProducer {
		return pod, j.acked.Load(), nil
	}
	j.owned[client].Store(0) // a dead member owns nothing, and says no more
	j.v.Gone(pod, at)
	return pod, j.read[client].Swap(0), nil // what its replacement reads is its own
}

// retire makes sure that the pod of a client whose events ended is gone
// before another takes its place: its events may have ended with the pod
// still running (a broken log stream), and two producers, or two members
// in one slot, must never run. A pod gone already is retired.
func (j *javaClients) retire(ctx context.Context, pod string) error {
	return javaload.Kill(ctx, j.env.admin(), j.spec.Namespace, pod)
}

// replace starts the next incarnation of client if the running one has
// ended (a new producer, or a new member in the slot).
func (j *javaClients) replace(ctx context.Context, client int) (pod string, started bool, err error) {
	if client == JavaProducer {
		return j.replaceProducer(ctx)
	}
	j.clientsMu.Lock()
	defer j.clientsMu.Unlock()
	cur, err := j.client(client)
	if err != nil || !j.over(cur) {
		return cur, false, err
	}
	if err := j.retire(ctx, cur); err != nil {
		return cur, false, err
	}
	j.mu.Lock()
	finished, next := j.finished, j.members[client]+1
	j.mu.Unlock()
	if finished {
		return "", false, ErrNoJava
	}
	// The ended member owns nothing any more, whether or not it said so
	// before its end (an evicted one leaves, a killed one cannot).
	j.owned[client].Store(0)
	j.v.Gone(cur, time.Time{})
	pod = j.spec.ConsumerName(client, next)
	j.read[client].Store(0)
	if err := j.start(ctx, j.spec.ConsumerPod(client, next), j.consumerEvent(client, pod)); err != nil {
		return "", false, err
	}
	j.mu.Lock()
	j.members[client] = next
	j.mu.Unlock()
	return pod, true, nil
}

// nextProducer starts the next incarnation of the producer, unless the
// workload is finishing. It becomes the running producer only once its pod
// exists.
func (j *javaClients) nextProducer(ctx context.Context) (string, error) {
	j.clientsMu.Lock()
	defer j.clientsMu.Unlock()
	return j.nextProducerLocked(ctx)
}

// replaceProducer starts the next producer if the running one has ended.
func (j *javaClients) replaceProducer(ctx context.Context) (pod string, started bool, err error) {
	j.clientsMu.Lock()
	defer j.clientsMu.Unlock()
	cur := j.producer()
	if !j.over(cur) {
		return cur, false, nil
	}
	if err := j.retire(ctx, cur); err != nil {
		return cur, false, err
	}
	pod, err = j.nextProducerLocked(ctx)
	return pod, err == nil, err
}

// nextProducerLocked is nextProducer with j.clientsMu held.
func (j *javaClients) nextProducerLocked(ctx context.Context) (string, error) {
	j.mu.Lock()
	finished, next := j.finished, j.incarnation+1
	j.mu.Unlock()
	if finished {
		return "", ErrNoJava
	}
	pod := j.spec.ProducerPod(next)
	if err := j.start(ctx, pod, j.producerEvent); err != nil {
		return "", err
	}
	j.mu.Lock()
	j.incarnation = next
	j.mu.Unlock()
	return pod.Name, nil
}

// finishProducers marks the workload finishing (finishClients), and
// returns the running producer's pod.
func (j *javaClients) finishProducers() string {
	j.finishClients()
	return j.producer()
}

// finishClients marks the workload finishing: no client starts any more,
// neither a fault's replacement nor the supervisor's.
func (j *javaClients) finishClients() {
	j.clientsMu.Lock()
	defer j.clientsMu.Unlock()
	j.mu.Lock()
	j.finished = true
	j.mu.Unlock()
}

// fail records why the run was not seen whole, once per reason.
func (j *javaClients) fail(why string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !slices.Contains(j.failed, why) {
		j.failed = append(j.failed, why)
	}
}

// toolErrors records every ended tool's follow error (a producer killed
// and replaced is never stopped by Finish).
func (j *javaClients) toolErrors() {
	j.mu.Lock()
	var errs []string
	for _, t := range j.tools {
		if t.over() && t.err != nil {
			errs = append(errs, t.err.Error())
		}
	}
	j.mu.Unlock()
	slices.Sort(errs)
	for _, e := range errs {
		j.fail(e)
	}
}
