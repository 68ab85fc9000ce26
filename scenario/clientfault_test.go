package scenario

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

func TestMemberCrashOutsideARun(t *testing.T) {
	ctx := context.Background()
	// A dry run prints the plan and crashes nothing (there is no group to
	// crash: a real Inject would fail).
	var out bytes.Buffer
	dry := &MemberCrash{Member: Member{Control: steadystate.NewGroupControl(nil), Slot: 1, DryRun: true, Out: &out}}
	if err := dry.Inject(ctx); err != nil || !strings.HasPrefix(out.String(), "dry-run: crash member 1") {
		t.Errorf("dry run: %v, printed %q", err, out.String())
	}
	f := &MemberCrash{Member: Member{Control: steadystate.NewGroupControl(nil), Slot: 1}}
	if err := f.Inject(ctx); err == nil {
		t.Error("a crash with no group running succeeded")
	}
	// Once the run is over there is nothing to recover: the crashed
	// client went with it.
	if err := f.Recover(ctx); err != nil {
		t.Errorf("Recover after the run: %v", err)
	}
}
