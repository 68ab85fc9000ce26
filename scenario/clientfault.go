package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// ErrNoControl: a member fault without a GroupControl.
var ErrNoControl = errors.New("scenario: a member fault needs the group's steadystate.GroupControl")

// Member is what a client fault aims at: one member of the application's
// consumer group, through the group's control. Nothing on the cluster
// changes, so a member fault has nothing for the ledger: its client dies
// with the run.
type Member struct {
	Control *steadystate.GroupControl
	// Slot is the member's place in the group (0 to Members-1).
	Slot   int
	DryRun bool
	Out    io.Writer
}

// planned is the start of a member fault's Inject: an error without a
// control; in a dry run the plan printed and true (nothing more to do).
func (m Member) planned(plan string) (bool, error) {
	switch {
	case m.Control == nil:
		return false, ErrNoControl
	case m.DryRun:
		m.say("dry-run: %s", plan)
		return true, nil
	}
	return false, nil
}

// recovering reports whether a member fault's Recover has work to do: not
// in a dry run, nor without a control.
func (m Member) recovering() bool { return !m.DryRun && m.Control != nil }

// ended turns err, a recovery's, into nil once the run has ended (its
// group closed: nothing left to recover), else wraps it.
func (m Member) ended(what string, err error) error {
	if err == nil || errors.Is(err, steadystate.ErrNoGroup) {
		return nil
	}
	return fmt.Errorf("scenario: %s group member %d: %w", what, m.Slot, err)
}

func (m Member) say(format string, a ...any) {
	if m.Out != nil {
		fmt.Fprintf(m.Out, format+"\n", a...)
	}
}

// MemberCrash is a client fault: a member of the application's consumer
// group crashes (steadystate.GroupControl.Crash: no LeaveGroup, its
// connections closed), and Recover starts a new member in its place, as a
// restarted process.
type MemberCrash struct {
	Member
	// Crashed is the crashed member's name and Owned the partitions it
	// owned, once injected.
	Crashed string
	Owned   []int32
}

var _ chaos.Fault = (*MemberCrash)(nil)

// Name says which member crashes.
func (f *MemberCrash) Name() string {
	return fmt.Sprintf("crash consumer group member %d (no LeaveGroup)", f.Slot)
}

// Plan says what Inject does.
func (f *MemberCrash) Plan() string {
	return fmt.Sprintf("crash member %d of the application's consumer group: it stops polling and committing, sends no LeaveGroup and its connections close; on recovery a new member joins in its place", f.Slot)
}

// Inject crashes the member (a dry run prints the plan).
func (f *MemberCrash) Inject(context.Context) error {
	if done, err := f.planned(f.Plan()); done || err != nil {
		return err
	}
	name, owned, err := f.Control.Crash(f.Slot)
	if err != nil {
		return fmt.Errorf("scenario: crashing group member %d: %w", f.Slot, err)
	}
	f.Crashed, f.Owned = name, owned
	f.say("%s crashed, owning partitions %v", name, owned)
	return nil
}

// Recover starts a new member in the crashed one's slot; once the run has
// ended (its group closed) there is nothing to recover.
func (f *MemberCrash) Recover(context.Context) error {
	if !f.recovering() {
		return nil
	}
	name, started, err := f.Control.Restart(f.Slot)
	if started {
		f.say("%s joined in member %d's place", name, f.Slot)
	}
	return f.ended("restarting", err)
}

// MemberCut is a client fault: a member of the application's consumer
// group is cut off from the brokers (steadystate.GroupControl.Cut: its
// connections closed, none opened), while the application goes on; Recover
// heals it.
type MemberCut struct {
	Member
}

var _ chaos.Fault = (*MemberCut)(nil)

// Name says which member is cut off.
func (f *MemberCut) Name() string {
	return fmt.Sprintf("cut consumer group member %d off from the brokers", f.Slot)
}

// Plan says what Inject does.
func (f *MemberCut) Plan() string {
	return fmt.Sprintf("cut member %d of the application's consumer group off from every broker (its connections closed, no new ones) while it goes on; on recovery it may dial again", f.Slot)
}

// Inject cuts the member off (a dry run prints the plan).
func (f *MemberCut) Inject(context.Context) error {
	if done, err := f.planned(f.Plan()); done || err != nil {
		return err
	}
	if _, err := f.Control.Cut(f.Slot); err != nil {
		return fmt.Errorf("scenario: cutting group member %d off: %w", f.Slot, err)
	}
	return nil
}

// Recover heals the member; once the run has ended there is nothing to
// heal.
func (f *MemberCut) Recover(context.Context) error {
	if !f.recovering() {
		return nil
	}
	_, err := f.Control.Heal(f.Slot)
	return f.ended("healing", err)
}
