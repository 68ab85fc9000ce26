package suites

import (
	"context"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kafkachaos/kafkachaos/chaos"
)

// sequence is a story's fault made of steps that Inject takes in order:
// faults, whose victims may only be known when their turn comes, and
// actions on Kafka between them (plant a topic, wait for an election).
// Recover recovers every fault a step injected, the last first; it is
// idempotent, as each fault's Recover is.
type sequence struct {
	name  string
	steps []step
	done  []chaos.Fault
}

// step is one step of a sequence: a fault, or an action (do).
type step struct {
	what  string
	fault func(ctx context.Context) (chaos.Fault, error)
	do    func(ctx context.Context) error
}

var _ chaos.Fault = (*sequence)(nil)

func (s *sequence) Name() string { return s.name }

// Inject takes the steps in order and stops at the first that fails.
func (s *sequence) Inject(ctx context.Context) error {
	for i, st := range s.steps {
		By(fmt.Sprintf("step %d of %d: %s", i+1, len(s.steps), st.what))
		if st.fault == nil {
			if err := st.do(ctx); err != nil {
				return fmt.Errorf("step %d (%s): %w", i+1, st.what, err)
			}
			continue
		}
		f, err := st.fault(ctx)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, st.what, err)
		}
		s.done = append(s.done, f) // before Inject: a failed one may have half-happened
		if err := f.Inject(ctx); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, st.what, err)
		}
	}
	return nil
}

// Recover recovers the injected faults, the last first, and goes on past
// one that fails.
func (s *sequence) Recover(ctx context.Context) error {
	var errs []error
	for i := len(s.done) - 1; i >= 0; i-- {
		if err := s.done[i].Recover(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
