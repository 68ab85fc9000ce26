package steadystate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// A member crashed mid-run sends no LeaveGroup: its partitions stay
// unowned until its session times out at the coordinator, then others
// take them from the last commit; a member restarted in its slot joins.
// The group loses, skips and miscommits nothing.
func TestGroupMemberCrashAndRestart(t *testing.T) {
	const session = 6 * time.Second // kfake's group.min.session.timeout.ms
	c := newFake(t)
	cfg := fakeConfig(c)
	cfg.Rate, cfg.NumRecords = 1000, 25000
	cfg.ClientOpts = []kgo.Opt{kgo.SessionTimeout(session), kgo.HeartbeatInterval(time.Second)}
	control := NewGroupControl(nil)
	cfg.Group = GroupConfig{Members: 3, Control: control}

	type crashed struct {
		at    time.Time
		slot  int
		parts []int32
		err   error
	}
	done := make(chan crashed, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var cr crashed
		defer func() { done <- cr }()
		// Once the group has settled (every partition owned, its members
		// joined), crash a member that owns a partition.
		time.Sleep(5 * time.Second)
		for ctx.Err() == nil {
			if un, err := control.Unowned(); err == nil && len(un) == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		for i := range 3 {
			if owned, err := control.Owned(i); err != nil || len(owned) == 0 {
				continue
			}
			at := time.Now()
			_, parts, err := control.Crash(i)
			cr = crashed{at, i, parts, err}
			break
		}
		// Restart it once the others took its partitions over.
		for ctx.Err() == nil {
			if un, err := control.Unowned(); err == nil && len(un) == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, _, err := control.Restart(cr.slot); err != nil {
			cr.err = err
		}
	}()
	rep := runFake(t, cfg)
	cr := <-done
	if cr.err != nil || len(cr.parts) == 0 {
		t.Fatalf("crash: %+v", cr)
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
	const session = 6 * time.Second
	c := newFake(t)
	cfg := fakeConfig(c)
	cfg.Rate, cfg.NumRecords = 1000, 30000
	cfg.ClientOpts = []kgo.Opt{kgo.SessionTimeout(session), kgo.HeartbeatInterval(time.Second)}
	control := NewGroupControl(nil)
	cfg.Group = GroupConfig{Members: 3, Control: control}

	errs := make(chan error, 1)
	go func() {
		errs <- func() error {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			owned := func() []int32 { o, _ := control.Owned(1); return o }
			for ctx.Err() == nil && len(owned()) == 0 {
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(2 * time.Second) // the group settled
			t.Logf("%s: cutting member 1 off, which owns %v", time.Now().Format("15:04:05.000"), owned())
			if _, err := control.Cut(1); err != nil {
				return err
			}
			time.Sleep(2 * session)
			t.Logf("%s: healing member 1, which owns %v", time.Now().Format("15:04:05.000"), owned())
			if _, err := control.Heal(1); err != nil {
				return err
			}
			// Fenced, it loses its partitions and rejoins for new ones.
			time.Sleep(session)
			for ctx.Err() == nil && len(owned()) == 0 {
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("%s: member 1 owns %v", time.Now().Format("15:04:05.000"), owned())
			return ctx.Err()
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
