package soak

import (
	"context"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/procstat"
)

// Sample is one look at the process.
type Sample struct {
	At         time.Time `json:"at"`
	RSSBytes   uint64    `json:"rssBytes"`
	Goroutines int       `json:"goroutines"`
}

// Sampler samples the process every interval until Stop.
type Sampler struct {
	mu      sync.Mutex
	samples []Sample
	err     error
	cancel  context.CancelFunc
	done    chan struct{}
}

// Start samples the process now and then every every, until ctx ends or
// Stop is called.
func Start(ctx context.Context, every time.Duration) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.take()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *Sampler) take() {
	rss, err := procstat.RSS(os.Getpid())
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		return
	}
	s.samples = append(s.samples, Sample{At: time.Now(), RSSBytes: rss, Goroutines: runtime.NumGoroutine()})
}

// Samples returns what was sampled so far.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// Stop stops sampling and returns the samples, with the last error of
// reading the process's memory, if any. It may be called again.
func (s *Sampler) Stop() ([]Sample, error) {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...), s.err
}
