package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// MemberCrash is a client fault: a member of the application's consumer
// group crashes (steadystate.GroupControl.Crash: no LeaveGroup, its
// connections closed), and Recover starts a new member in its place, as a
// restarted process. Nothing on the cluster changes, so there is nothing
// for the ledger: the crashed client dies with the run.
type MemberCrash struct {
	Control *steadystate.GroupControl
	// Slot is the member's place in the group (0 to Members-1).
	Slot   int
	DryRun bool
	Out    io.Writer
	// Crashed is the crashed member's name and Owned the partitions it
	// owned, once injected.
	Crashed string
	Owned   []int32
}

var _ chaos.Fault = (*MemberCrash)(nil)

// ErrNoControl: a member fault without a GroupControl.
var ErrNoControl = errors.New("scenario: a member fault needs the group's steadystate.GroupControl")

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
	if f.Control == nil {
		return ErrNoControl
	}
	if f.DryRun {
		if f.Out != nil {
			fmt.Fprintln(f.Out, "dry-run: "+f.Plan())
		}
		return nil
	}
	name, owned, err := f.Control.Crash(f.Slot)
	if err != nil {
		return fmt.Errorf("scenario: crashing group member %d: %w", f.Slot, err)
	}
	f.Crashed, f.Owned = name, owned
	if f.Out != nil {
		fmt.Fprintf(f.Out, "%s crashed, owning partitions %v\n", name, owned)
	}
	return nil
}

// Recover starts a new member in the crashed one's slot; once the run has
// ended (its group closed) there is nothing to recover.
func (f *MemberCrash) Recover(context.Context) error {
	if f.DryRun || f.Control == nil {
		return nil
	}
	name, started, err := f.Control.Restart(f.Slot)
	switch {
	case errors.Is(err, steadystate.ErrNoGroup):
		return nil
	case err != nil:
		return fmt.Errorf("scenario: restarting group member %d: %w", f.Slot, err)
	}
	if f.Out != nil && started {
		fmt.Fprintf(f.Out, "%s joined in member %d's place\n", name, f.Slot)
	}
	return nil
}

// MemberCut is a client fault: a member of the application's consumer
// group is cut off from the brokers (steadystate.GroupControl.Cut: its
// connections closed, none opened), while the application goes on; Recover
// heals it. Like MemberCrash it changes nothing on the cluster.
type MemberCut struct {
	Control *steadystate.GroupControl
	// Slot is the member's place in the group (0 to Members-1).
	Slot   int
	DryRun bool
	Out    io.Writer
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
	if f.Control == nil {
		return ErrNoControl
	}
	if f.DryRun {
		if f.Out != nil {
			fmt.Fprintln(f.Out, "dry-run: "+f.Plan())
		}
		return nil
	}
	if _, err := f.Control.Cut(f.Slot); err != nil {
		return fmt.Errorf("scenario: cutting group member %d off: %w", f.Slot, err)
	}
	return nil
}

// Recover heals the member; once the run has ended there is nothing to
// heal.
func (f *MemberCut) Recover(context.Context) error {
	if f.DryRun || f.Control == nil {
		return nil
	}
	_, err := f.Control.Heal(f.Slot)
	if err != nil && !errors.Is(err, steadystate.ErrNoGroup) {
		return fmt.Errorf("scenario: healing group member %d: %w", f.Slot, err)
	}
	return nil
}
