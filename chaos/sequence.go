package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sequence is a fault made of steps that Inject takes in order: faults,
// whose victims may be known only when their turn comes, and actions on
// Kafka between them (plant a topic, wait for an election). Recover
// recovers every fault a step injected, the last first; it is idempotent,
// as each fault's Recover is.
//
// Inject checks the steps (each has a Fault or a Do, not both), then runs
// the guard on its Scope before any step, as every fault does. A step's
// fault is injected through its own Inject, so it passes its own guard too.
//
// A dry run is the Scope's (DryRun). Inject then prints "dry-run: " and
// the plan to Out, skips every Do step (a dry run makes no change, on Kafka
// either), and builds each step's fault, which chooses its victim from what
// the cluster is like now; it injects that fault only if the fault is a
// dry-run fault itself (it embeds a Scope with DryRun set) and skips any
// other, so a dry run never causes a fault. A step whose victim cannot be
// chosen (Fault returns an error, which may be because a skipped Do step
// would have set the stage) is told through Say and skipped, and the dry
// run goes on. Recover then recovers the dry-run faults injected, which
// only say what they would do.
type Sequence struct {
	Scope
	// What says what the sequence does, for narration and reports: Name
	// returns it.
	What  string
	Steps []Step
	// Say narrates each step as its turn comes ("step 2 of 3: ..."), as
	// Ginkgo's By does; nil is silent.
	Say func(string)

	done []Fault // the faults injected, in order
}

// Step is one step of a Sequence: a fault, or an action (Do).
type Step struct {
	// What says what the step does, for narration and the plan.
	What string
	// Fault returns the step's fault when its turn comes, its victim chosen
	// then. It should only read: it is called in a dry run too.
	Fault func(ctx context.Context) (Fault, error)
	// Do is an action on Kafka; a dry run skips it.
	Do func(ctx context.Context) error
}

var _ Fault = (*Sequence)(nil)

// Name implements Fault.
func (s *Sequence) Name() string { return s.What }

// Plan lists the steps by What, and says that a step's victim is chosen
// only when that step comes, and what a dry run does.
func (s *Sequence) Plan() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, in %d steps: ", s.What, len(s.Steps))
	for i, st := range s.Steps {
		if i > 0 {
			b.WriteString("; ")
		}
		what := "a fault"
		if st.Fault == nil {
			what = "on Kafka"
		}
		fmt.Fprintf(&b, "(%d) %s (%s)", i+1, st.What, what)
	}
	b.WriteString(". A fault step's victim is chosen only when that step comes. A dry run skips the steps on Kafka," +
		" and injects a step's fault only if that fault is a dry run too")
	return b.String()
}

// validate checks the steps; it makes no call.
func (s *Sequence) validate() error {
	var errs []error
	for i, st := range s.Steps {
		if (st.Fault == nil) == (st.Do == nil) {
			errs = append(errs, fmt.Errorf("step %d (%s): give it a Fault or a Do, and not both", i+1, st.What))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chaos: %s: %w", s.Name(), err)
	}
	return nil
}

// Inject implements Fault: it takes the steps in order and stops at the
// first that fails. See Sequence for the dry run.
func (s *Sequence) Inject(ctx context.Context) error {
	if err := s.validate(); err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	if s.DryRun {
		s.say("dry-run: %s", s.Plan())
	}
	for i, st := range s.Steps {
		s.tell("step %d of %d: %s", i+1, len(s.Steps), st.What)
		if err := s.take(ctx, st); err != nil {
			return fmt.Errorf("chaos: %s: step %d (%s): %w", s.Name(), i+1, st.What, err)
		}
	}
	return nil
}

// take takes one step.
func (s *Sequence) take(ctx context.Context, st Step) error {
	if st.Fault == nil {
		if s.DryRun {
			s.tell("dry-run: skipped: a dry run makes no change on Kafka")
			return nil
		}
		return st.Do(ctx)
	}
	f, err := st.Fault(ctx)
	switch {
	case err != nil && s.DryRun:
		s.tell("dry-run: skipped: its victim cannot be chosen now (%v); a run chooses it when the step comes", err)
		return nil
	case err != nil:
		return err
	case f == nil:
		return errors.New("the step made no fault")
	case s.DryRun && !isDryRunFault(f):
		s.tell("dry-run: not injected: %s is not a dry-run fault", f.Name())
		return nil
	}
	s.done = append(s.done, f) // before Inject: a failed one may have half-happened
	return f.Inject(ctx)
}

// tell narrates through Say.
func (s *Sequence) tell(format string, a ...any) {
	if s.Say != nil {
		s.Say(fmt.Sprintf(format, a...))
	}
}

// isDryRunFault reports whether f is a dry run's: it embeds a Scope with
// DryRun set.
func isDryRunFault(f Fault) bool {
	d, ok := f.(interface{ isDryRun() bool })
	return ok && d.isDryRun()
}

// Recover implements Fault: it recovers the injected faults, the last
// first, and goes on past one that fails.
func (s *Sequence) Recover(ctx context.Context) error {
	var errs []error
	for i := len(s.done) - 1; i >= 0; i-- {
		if err := s.done[i].Recover(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chaos: recover from %s: %w", s.Name(), err)
	}
	return nil
}
