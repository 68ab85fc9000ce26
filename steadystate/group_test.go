package steadystate

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

func TestRunGroupOfThreeIsClean(t *testing.T) {
	for _, protocol := range []string{GroupProtocolClassic, GroupProtocolConsumer} {
		t.Run(protocol, func(t *testing.T) {
			c := newFake(t)
			cfg := fakeConfig(c)
			cfg.Group = GroupConfig{Members: 3, Protocol: protocol, Name: "app-" + protocol}
			rep := runFake(t, cfg)
			// The group went by the name given: its commits are there.
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), cfg.Group.Name)
			if err != nil || len(offs) == 0 {
				t.Errorf("no commits of group %s: %v %v", cfg.Group.Name, offs, err)
			}
			g := rep.Group
			if g == nil {
				t.Fatal("no group verdict in the report")
			}
			t.Logf("group: acked %d consumed %d redelivered %d assignments %d revocations %d unowned %d problems %q",
				g.Acked, g.Consumed, g.Redelivered, g.Assignments, g.Revocations, len(g.Unowned), g.Problems())
			if !g.Clean() {
				t.Errorf("a clean run's group found anomalies: %q", g.Problems())
			}
			if g.Acked != 3000 || g.Consumed != 3000 {
				t.Errorf("group acked %d consumed %d, want 3000 and 3000", g.Acked, g.Consumed)
			}
			if g.Assignments < 3 {
				t.Errorf("%d partitions assigned, want at least the 3 of the topic", g.Assignments)
			}
			if !rep.Passed() {
				t.Errorf("violations: %v", rep.Violations)
			}
			found := false
			for _, v := range rep.Verdicts {
				found = found || v.Kind == BoundGroupAnomalies
			}
			if !found {
				t.Error("no verdict on the group's anomalies")
			}
		})
	}
}

func TestGroupVerdict(t *testing.T) {
	clean := groupVerdict(groupcheck.Result{Counts: map[groupcheck.Check]uint64{}})
	bad := groupVerdict(groupcheck.Result{Counts: map[groupcheck.Check]uint64{groupcheck.CheckPollSkip: 2}})
	if !clean.Passed || bad.Passed || bad.Observed != "poll-skip: 2" {
		t.Errorf("clean %+v, bad %+v", clean, bad)
	}
}

func TestGroupConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		g  GroupConfig
		ok bool
	}{
		{GroupConfig{}, true}, {GroupConfig{Members: 3, Protocol: "consumer"}, true}, {GroupConfig{Members: 3, Protocol: "classic"}, true},
		{GroupConfig{Members: -1}, false}, {GroupConfig{Members: 65}, false}, {GroupConfig{Members: 3, Protocol: "eager"}, false},
	} {
		if err := tt.g.validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: %v, want ok %t", tt.g, err, tt.ok)
		}
	}
}
