package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// committedEvery is how often the Java group's committed offsets are read
// from the brokers.
const committedEvery = time.Second

// committedWatch reads a group's committed offsets from the brokers
// (OffsetFetch) every committedEvery, and keeps where one went backwards:
// the brokers' own word, which needs no guess at when a client's commit
// was applied. A commit that goes backwards and forwards again within one
// read is missed.
type committedWatch struct {
	mu        sync.Mutex
	highest   map[int32]int64
	backwards []string // witnesses, at most maxBackwards
	count     int
	reads     int   // reads that served at least one committed offset
	lastErr   error // the last failed read's error
}

const maxBackwards = 10

// run reads the committed offsets of group on topic until stop is closed.
func (w *committedWatch) run(ctx context.Context, adm *kadm.Client, group, topic string, stop <-chan struct{}) {
	t := time.NewTicker(committedEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case now := <-t.C:
			resp, err := adm.FetchOffsets(ctx, group)
			if err != nil {
				w.failed(err) // the brokers may be down: the next read tells
				continue
			}
			w.observe(now, resp[topic])
		}
	}
}

// observe takes one read of the topic's committed offsets, by partition.
func (w *committedWatch) observe(at time.Time, parts map[int32]kadm.OffsetResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.highest == nil {
		w.highest = map[int32]int64{}
	}
	served := false
	for p, o := range parts {
		if o.Err != nil || o.At < 0 {
			continue
		}
		served = true
		high, seen := w.highest[p]
		switch {
		case !seen || o.At > high:
			w.highest[p] = o.At
		case o.At < high:
			w.count++
			if len(w.backwards) < maxBackwards {
				w.backwards = append(w.backwards, fmt.Sprintf("partition %d: the brokers served committed offset %d at %s UTC, after %d",
					p, o.At, at.UTC().Format("15:04:05.000"), high))
			}
			w.highest[p] = o.At // one step back is one witness
		}
	}
	if served {
		w.reads++
	}
}

// failed keeps a read's error, for a watch that never read anything.
func (w *committedWatch) failed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastErr = err
}

// problems says where the committed offsets went backwards, and a watch
// that never read them.
func (w *committedWatch) problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.reads == 0 && w.lastErr != nil:
		return []string{fmt.Sprintf("the group's committed offsets were never read from the brokers (OffsetFetch: %v)", w.lastErr)}
	case w.reads == 0:
		return []string{"the brokers never served a committed offset of the group"}
	case w.count > 0:
		return append([]string{fmt.Sprintf("committed offsets went backwards %d times, as the brokers served them (OffsetFetch every %s)", w.count, committedEvery)}, w.backwards...)
	}
	return nil
}
