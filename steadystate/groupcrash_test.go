package steadystate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// memberFaultSession is the members' session in these tests: kfake's
// group.min.session.timeout.ms.
const memberFaultSession = 6 * time.Second

// memberFaultConfig is a run of records at 1000/s on the fake, beside a
// group of 3 (on its 3 partitions) whose members dial through the control
// it returns, with a short session.
func memberFaultConfig(t *testing.T, records int64) (Config, *GroupControl) {
	cfg := fakeConfig(newFake(t))
	cfg.Rate, cfg.NumRecords = 1000, records
	cfg.ClientOpts = []kgo.Opt{kgo.SessionTimeout(memberFaultSession), kgo.HeartbeatInterval(time.Second)}
	control := NewGroupControl(nil)
	cfg.Group = GroupConfig{Members: 3, Control: control}
	return cfg, control
}

// waitUntil polls cond until it holds or ctx ends.
func waitUntil(ctx context.Context, cond func() bool) error {
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil })
}

// settled holds once every member of the group of 3 owns a partition.
func settled(control *GroupControl) bool {
	for i := range 3 {
		if owned, err := control.Owned(i); err != nil || len(owned) == 0 {
			return false
		}
	}
	return true
}

// everyPartitionOwned holds once no partition is without an owner.
func everyPartitionOwned(control *GroupControl) bool {
	un, err := control.Unowned()
	return err == nil && len(un) == 0
}

// A member crashed mid-run sends no LeaveGroup: its partitions stay
// unowned until its session times out at the coordinator, then others
// take them from the last commit; a member restarted in its slot joins.
// The group loses, skips and miscommits nothing.
func TestGroupMemberCrashAndRestart(t *testing.T) {
	const session = memberFaultSession
	cfg, control := memberFaultConfig(t, 25000)

	type crashed struct {
		at    time.Time
		parts []int32
		view  GroupView
		err   error
	}
	done := make(chan crashed, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var cr crashed
		defer func() { done <- cr }()
		// Once the group has settled, crash member 1.
		if cr.err = waitUntil(ctx, func() bool { return settled(control) }); cr.err != nil {
			return
		}
		cr.at = time.Now()
		if _, cr.parts, cr.err = control.Crash(1); cr.err != nil {
			return
		}
		// Restart it once the others took its partitions over.
		if cr.err = waitUntil(ctx, func() bool { return everyPartitionOwned(control) }); cr.err != nil {
			return
		}
		// The coordinator agrees: the two others hold every partition.
		if cr.view, cr.err = control.Describe(ctx); cr.err != nil {
			return
		}
		_, _, cr.err = control.Restart(1)
	}()
	rep := runFake(t, cfg)
	cr := <-done
	if cr.err != nil || len(cr.parts) == 0 {
		t.Fatalf("crash: %+v", cr)
	}
	t.Logf("the coordinator's view after the takeover: %s", cr.view)
	var held []int32
	for _, m := range cr.view.Members {
		if m.Name != "member-0" && m.Name != "member-2" {
			t.Errorf("after the takeover the coordinator has member %s (%q), want only member-0 and member-2", m.ID, m.Name)
		}
		held = append(held, m.Assigned...)
	}
	if slices.Sort(held); !slices.Equal(held, []int32{0, 1, 2}) {
		t.Errorf("after the takeover the coordinator assigned %v, want every partition once", held)
	}
	g := rep.Group
	t.Logf("group: acked %d consumed %d redelivered %d assignments %d revocations %d unowned %+v problems %q",
		g.Acked, g.Consumed, g.Redelivered, g.Assignments, g.Revocations, g.Unowned, g.Problems())
	if !g.Clean() || g.Acked != 25000 || g.Consumed != g.Acked {
		t.Errorf("the group after a member's crash: acked %d consumed %d, problems %q", g.Acked, g.Consumed, g.Problems())
	}
	// The crashed member's partitions were unowned from the crash until
	// the coordinator expired its session: not at once, as a LeaveGroup
	// would have them.
	for _, p := range cr.parts {
		i := slices.IndexFunc(g.Unowned, func(u groupcheck.Unowned) bool { return u.Partition == p && !u.From.Before(cr.at) })
		if i < 0 {
			t.Errorf("partition %d: no unowned time after the crash at %s: %+v", p, cr.at.Format("15:04:05.000"), g.Unowned)
			continue
		}
		if d := g.Unowned[i].To.Sub(g.Unowned[i].From); d < session/2 {
			t.Errorf("partition %d was taken over %s after the crash, before the %s session could expire: did the member leave?", p, d, session)
		}
	}
}

// A member cut off from the brokers past its session is evicted and its
// partitions handed on; healed, it finds it was fenced, rejoins, and owns
// partitions again. The group loses, skips and miscommits nothing.
func TestGroupMemberCutAndHealed(t *testing.T) {
	cfg, control := memberFaultConfig(t, 30000)
	errs := make(chan error, 1)
	go func() {
		errs <- func() error {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			owned := func() []int32 { o, _ := control.Owned(1); return o }
			if err := waitUntil(ctx, func() bool { return settled(control) }); err != nil {
				return err
			}
			t.Logf("%s: cutting member 1 off, which owns %v", time.Now().Format("15:04:05.000"), owned())
			if _, err := control.Cut(1); err != nil {
				return err
			}
			// Past its session: it gave its partitions up, and the
			// coordinator handed them on.
			if err := waitUntil(ctx, func() bool { return len(owned()) == 0 && everyPartitionOwned(control) }); err != nil {
				return err
			}
			t.Logf("%s: healing member 1", time.Now().Format("15:04:05.000"))
			if _, err := control.Heal(1); err != nil {
				return err
			}
			// Fenced, it rejoins for new partitions.
			if err := waitUntil(ctx, func() bool { return len(owned()) > 0 }); err != nil {
				return err
			}
			t.Logf("%s: member 1 owns %v", time.Now().Format("15:04:05.000"), owned())
			return nil
		}()
	}()
	rep := runFake(t, cfg)
	if err := <-errs; err != nil {
		t.Fatalf("cutting and healing member 1: %v", err)
	}
	g := rep.Group
	t.Logf("group: acked %d consumed %d redelivered %d assignments %d revocations %d problems %q",
		g.Acked, g.Consumed, g.Redelivered, g.Assignments, g.Revocations, g.Problems())
	if !g.Clean() || g.Consumed != g.Acked || g.Acked != 30000 {
		t.Errorf("the group after a member's cut: acked %d consumed %d, problems %q", g.Acked, g.Consumed, g.Problems())
	}
}
