package scenario

import (
	"context"
	"fmt"
	"time"
)

// supervise replaces, every javaPoll until ctx ends, any Java client whose
// tool ended without the suite asking (its pod evicted by a drain, deleted
// by someone, or its process dead), as a Deployment's controller would
// replace an application's pod: the Java clients' pods are bare, so
// nothing else brings them back. A pod the suite stopped or killed is
// left alone: a kill is a fault, and its Recover replaces the client. A
// replacement that fails is tried again each javaPoll; one that fails for
// javaGroupTimeout fails the run.
func (j *javaClients) supervise(ctx context.Context) {
	t := time.NewTicker(javaPoll)
	defer t.Stop()
	failing := map[int]time.Time{} // by client: when its replacement first failed
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, client := range j.ended() {
			pod, started, err := j.replace(ctx, client)
			if err == nil {
				delete(failing, client)
			}
			switch {
			case err != nil && ctx.Err() == nil:
				if _, ok := failing[client]; !ok {
					failing[client] = time.Now()
				}
				if time.Since(failing[client]) > javaGroupTimeout {
					j.fail(fmt.Sprintf("the Java %s's pod ended unasked, and no replacement started within %s: %v", javaClientName(client), javaGroupTimeout, err))
				}
			case started:
				j.replaced.Add(1)
				j.env.By(fmt.Sprintf("a Java client's pod ended unasked (evicted, deleted or dead): %s started in its place", pod))
			}
		}
	}
}

// ended lists the clients (JavaProducer, or members' slots) whose running
// tool ended without the suite asking, unless the workload is finishing.
func (j *javaClients) ended() []int {
	j.mu.Lock()
	finished := j.finished
	j.mu.Unlock()
	if finished {
		return nil
	}
	var out []int
	for _, client := range append([]int{JavaProducer}, j.slots()...) {
		pod, err := j.client(client)
		if err == nil && j.over(pod) && !j.asked(pod) {
			out = append(out, client)
		}
	}
	return out
}

// slots are the group's member slots, 0 to Members-1.
func (j *javaClients) slots() []int {
	out := make([]int, j.spec.Members)
	for i := range out {
		out[i] = i
	}
	return out
}

// ask marks pod's end as the suite's own doing (a stop or a kill).
func (j *javaClients) ask(pod string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stopped[pod] = true
}

// asked reports whether the suite ended pod.
func (j *javaClients) asked(pod string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stopped[pod]
}
