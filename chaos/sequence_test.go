package chaos

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// stepFault is a step's fault that logs what happens to it. Its Scope's
// DryRun makes it a dry-run fault.
type stepFault struct {
	Scope
	name                  string
	log                   *[]string
	injectErr, recoverErr error
}

var _ Fault = (*stepFault)(nil)

func (f *stepFault) Name() string { return f.name }
func (f *stepFault) Plan() string { return "log " + f.name }
func (f *stepFault) Inject(context.Context) error {
	*f.log = append(*f.log, "inject "+f.name)
	return f.injectErr
}
func (f *stepFault) Recover(context.Context) error {
	*f.log = append(*f.log, "recover "+f.name)
	return f.recoverErr
}

// steps builds a sequence's steps, logging to log.
type steps func(log *[]string) []Step

// faultStep is a step whose fault f is built (logged) when its turn comes.
func faultStep(what string, f *stepFault, err error) Step {
	return Step{What: what, Fault: func(context.Context) (Fault, error) {
		*f.log = append(*f.log, "build "+f.name)
		if err != nil {
			return nil, err
		}
		return f, nil
	}}
}

func doStep(what string, log *[]string, err error) Step {
	return Step{What: what, Do: func(context.Context) error {
		*log = append(*log, "do "+what)
		return err
	}}
}

// sequenceCase is a Sequence's steps and what injecting and recovering
// them must do.
type sequenceCase struct {
	name       string
	dryRun     bool
	notAllowed bool // the namespace has not opted in
	steps      steps
	wantErr    string // in Inject's error; "" for none
	wantLog    []string
	wantRecov  []string // logged by Recover
	recoverErr string   // in Recover's error
	wantSays   []string // among what Say was given
}

// run injects, then recovers, a Sequence of tt's steps in namespace kafka.
func (tt sequenceCase) run(t *testing.T) {
	ns := allowedNS("kafka")
	if tt.notAllowed {
		ns = plainNS("kafka", nil)
	}
	cs := newClient(ns)
	var log, says []string
	var out bytes.Buffer
	s := &Sequence{Scope: Scope{Client: cs, Namespace: "kafka", DryRun: tt.dryRun, Out: &out},
		What: "a story", Steps: tt.steps(&log), Say: func(m string) { says = append(says, m) }}
	err := s.Inject(t.Context())
	switch {
	case tt.wantErr == "" && err != nil:
		t.Fatalf("Inject: %v", err)
	case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
		t.Fatalf("Inject = %v, want an error saying %q", err, tt.wantErr)
	case err != nil && !strings.HasPrefix(err.Error(), "chaos: "):
		t.Errorf("error %q lacks the package's prefix", err)
	}
	if !slices.Equal(log, tt.wantLog) {
		t.Errorf("Inject did %q, want %q", log, tt.wantLog)
	}
	for _, want := range tt.wantSays {
		if !slices.Contains(says, want) && !slices.ContainsFunc(says, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("Say was given %q, not %q", says, want)
		}
	}
	if tt.dryRun && !strings.Contains(out.String(), "dry-run: "+s.Plan()) {
		t.Errorf("output %q does not hold the plan", out.String())
	}
	if m := mutations(cs); len(m) > 0 {
		t.Errorf("mutating calls %v", m)
	}
	log = nil
	err = s.Recover(t.Context())
	if (err != nil) != (tt.recoverErr != "") || (err != nil && !strings.Contains(err.Error(), tt.recoverErr)) {
		t.Errorf("Recover = %v, want an error saying %q", err, tt.recoverErr)
	}
	if !slices.Equal(log, tt.wantRecov) {
		t.Errorf("Recover did %q, want %q", log, tt.wantRecov)
	}
}

func TestSequence(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []sequenceCase{
		{name: "faults and actions in order, recovered last first",
			steps: func(log *[]string) []Step {
				return []Step{
					faultStep("a", &stepFault{name: "a", log: log}, nil),
					doStep("b", log, nil),
					faultStep("c", &stepFault{name: "c", log: log}, nil),
				}
			},
			wantLog:   []string{"build a", "inject a", "do b", "build c", "inject c"},
			wantRecov: []string{"recover c", "recover a"},
			wantSays:  []string{"step 1 of 3: a", "step 2 of 3: b", "step 3 of 3: c"}},
		{name: "a failed action stops the sequence",
			steps: func(log *[]string) []Step {
				return []Step{
					faultStep("a", &stepFault{name: "a", log: log}, nil),
					doStep("b", log, boom),
					faultStep("c", &stepFault{name: "c", log: log}, nil),
				}
			},
			wantErr: "step 2 (b): boom", wantLog: []string{"build a", "inject a", "do b"}, wantRecov: []string{"recover a"}},
		{name: "a failed inject is recovered: it may have half-happened",
			steps: func(log *[]string) []Step {
				return []Step{faultStep("a", &stepFault{name: "a", log: log, injectErr: boom}, nil)}
			},
			wantErr: "step 1 (a): boom", wantLog: []string{"build a", "inject a"}, wantRecov: []string{"recover a"}},
		{name: "a victim that cannot be chosen stops the sequence",
			steps: func(log *[]string) []Step {
				return []Step{faultStep("a", &stepFault{name: "a", log: log}, boom), doStep("b", log, nil)}
			},
			wantErr: "step 1 (a): boom", wantLog: []string{"build a"}},
		{name: "recover goes on past a failure",
			steps: func(log *[]string) []Step {
				return []Step{
					faultStep("a", &stepFault{name: "a", log: log}, nil),
					faultStep("c", &stepFault{name: "c", log: log, recoverErr: boom}, nil),
				}
			},
			wantLog:   []string{"build a", "inject a", "build c", "inject c"},
			wantRecov: []string{"recover c", "recover a"}, recoverErr: "boom"},
	} {
		t.Run(tt.name, tt.run)
	}
}

// A dry run takes no action and injects only dry-run faults; a sequence
// refused by the guard, or with a malformed step, takes no step.
func TestSequenceDryRunAndRefusals(t *testing.T) {
	boom := errors.New("boom")
	dry := Scope{DryRun: true}
	for _, tt := range []sequenceCase{
		{name: "dry run: no action, only dry-run faults injected", dryRun: true,
			steps: func(log *[]string) []Step {
				return []Step{
					faultStep("a", &stepFault{Scope: dry, name: "a", log: log}, nil),
					doStep("b", log, nil),
					faultStep("c", &stepFault{name: "c", log: log}, nil),
				}
			},
			wantLog:   []string{"build a", "inject a", "build c"},
			wantRecov: []string{"recover a"},
			wantSays:  []string{"dry-run: skipped: a dry run makes no change on Kafka", "dry-run: not injected: c is not a dry-run fault"}},
		{name: "dry run: a fault without a Scope is not injected", dryRun: true,
			steps: func(log *[]string) []Step {
				return []Step{{What: "flaky", Fault: func(context.Context) (Fault, error) { return &flaky{}, nil }}}
			},
			wantSays: []string{"dry-run: not injected: flaky is not a dry-run fault"}},
		{name: "dry run: a victim that cannot be chosen is told and skipped", dryRun: true,
			steps: func(log *[]string) []Step {
				return []Step{
					faultStep("a", &stepFault{Scope: dry, name: "a", log: log}, boom),
					faultStep("c", &stepFault{Scope: dry, name: "c", log: log}, nil),
				}
			},
			wantLog:   []string{"build a", "build c", "inject c"},
			wantRecov: []string{"recover c"},
			wantSays:  []string{"dry-run: skipped: its victim cannot be chosen now (boom)"}},
		{name: "namespace not opted in: no step taken", notAllowed: true,
			steps: func(log *[]string) []Step {
				return []Step{doStep("b", log, nil), faultStep("a", &stepFault{name: "a", log: log}, nil)}
			},
			wantErr: "lacks the label"},
		{name: "a step with both a fault and an action", steps: func(log *[]string) []Step {
			st := faultStep("a", &stepFault{name: "a", log: log}, nil)
			st.Do = doStep("b", log, nil).Do
			return []Step{st, {What: "nothing"}}
		}, wantErr: "step 1 (a): give it a Fault or a Do, and not both\nstep 2 (nothing): give it"},
	} {
		t.Run(tt.name, tt.run)
	}
}

func TestSequencePlan(t *testing.T) {
	s := &Sequence{What: "disk loss of voter 2, then a force-delete of the quorum leader", Steps: []Step{
		{What: "wipe voter 2's volume", Fault: func(context.Context) (Fault, error) { return nil, nil }},
		{What: "wait until voter 2 runs again", Do: func(context.Context) error { return nil }},
		{What: "force-delete the quorum leader", Fault: func(context.Context) (Fault, error) { return nil, nil }},
	}}
	for _, want := range []string{
		"disk loss of voter 2, then a force-delete of the quorum leader, in 3 steps: ",
		"(1) wipe voter 2's volume (a fault); (2) wait until voter 2 runs again (on Kafka); (3) force-delete the quorum leader (a fault)",
		"victim is chosen only when that step comes",
		"dry run skips the steps on Kafka",
		"only if that fault is a dry run too",
	} {
		if !strings.Contains(s.Plan(), want) {
			t.Errorf("Plan %q does not say %q", s.Plan(), want)
		}
	}
	if s.Name() != s.What {
		t.Errorf("Name %q, want What", s.Name())
	}
}
