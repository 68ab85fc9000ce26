package zookeeper

import (
	"context"
	"strings"
	"testing"
	"time"
)

// fakeServer is one server of a test ensemble: its srvr and mntr answers,
// or down (nothing listening).
type fakeServer struct {
	srvr, mntr string
	down       bool
}

func TestCheck(t *testing.T) {
	leader := testdata(t, "srvr_leader.txt")
	follower := testdata(t, "srvr_follower.txt")
	standalone := testdata(t, "srvr_standalone.txt")
	notServing := testdata(t, "srvr_not_serving.txt")
	mntr := testdata(t, "mntr_leader.txt")
	mntrOneSynced := strings.Replace(mntr, "zk_synced_followers\t2", "zk_synced_followers\t1", 1)
	notWhitelisted := testdata(t, "mntr_not_whitelisted.txt")
	withZxid := func(srvr, zxid string) string {
		return strings.Replace(srvr, "Zxid: 0x100000046", "Zxid: "+zxid, 1)
	}
	up := func(srvr string) fakeServer { return fakeServer{srvr: srvr} }
	lead := func(srvr, mntr string) fakeServer { return fakeServer{srvr: srvr, mntr: mntr} }
	down := fakeServer{down: true}

	tests := []struct {
		name       string
		servers    []fakeServer
		opts       []CheckOption
		timeout    time.Duration
		wantLeader int      // 0: Leader() is false
		wantStates string   // String()'s servers part
		problems   []string // each names one problem, in order; none: healthy
	}{
		{
			name:       "healthy",
			servers:    []fakeServer{up(follower), lead(leader, mntr), up(follower)},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
		},
		{
			name:       "one server down",
			servers:    []fakeServer{up(follower), lead(leader, mntrOneSynced), down},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=down",
			problems:   []string{"server 3 (", "does not answer: zookeeper srvr", "leader server 2 (", "has 1 synced followers, want 2 (2 learners connected)"},
		},
		{
			name:       "no leader",
			servers:    []fakeServer{up(notServing), up(notServing), up(notServing)},
			wantStates: "1=not-serving 2=not-serving 3=not-serving",
			problems: []string{
				"server 1 (", "is not serving requests",
				"server 2 (", "is not serving requests",
				"server 3 (", "is not serving requests",
				"no leader (0 of 3 servers serving)",
			},
		},
		{
			name:       "two leaders",
			servers:    []fakeServer{lead(leader, mntr), lead(withZxid(leader, "0x200000000"), mntr), up(follower)},
			wantStates: "1=leader 2=leader 3=follower",
			problems:   []string{"2 servers claim to lead: server 1 (", "zxid 0x100000046, server 2 (", "zxid 0x200000000"},
		},
		{
			name:       "follower not synced",
			servers:    []fakeServer{up(follower), lead(leader, mntrOneSynced), up(follower)},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
			problems:   []string{"has 1 synced followers, want 2"},
		},
		{
			name:       "mntr not whitelisted",
			servers:    []fakeServer{up(follower), lead(leader, notWhitelisted), up(follower)},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
			problems:   []string{"cannot count synced followers", "not in the server's 4lw.commands.whitelist"},
		},
		{
			name:       "leader stepped down before mntr",
			servers:    []fakeServer{up(follower), lead(leader, testdata(t, "mntr_follower.txt")), up(follower)},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
			problems:   []string{`said "follower" in mntr: leadership changed during the check`},
		},
		{
			name:       "standalone inside an ensemble",
			servers:    []fakeServer{up(follower), lead(leader, mntrOneSynced), up(standalone)},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=standalone",
			problems:   []string{"server 3 (", "is in standalone mode inside a 3-server ensemble", "has 1 synced followers, want 2"},
		},
		{
			name:       "single standalone server",
			servers:    []fakeServer{up(standalone)},
			wantStates: "1=standalone",
		},
		{
			name:       "follower trails the leader",
			servers:    []fakeServer{up(follower), lead(withZxid(leader, "0x100001000"), mntr), up(withZxid(follower, "0x100000ff0"))},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
			problems:   []string{"follower server 1 (", "trails leader server 2 (", "by 4026 transactions (zxid 0x100000046 against 0x100001000, max 1000)"},
		},
		{
			name:       "lag limit off",
			servers:    []fakeServer{up(follower), lead(withZxid(leader, "0x100001000"), mntr), up(follower)},
			opts:       []CheckOption{WithMaxZxidLag(-1)},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
		},
		{
			name:       "followers in the epoch before the election",
			servers:    []fakeServer{up(follower), lead(withZxid(leader, "0x200000000"), mntr), up(follower)},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
		},
		{
			name:       "follower past the leader's epoch",
			servers:    []fakeServer{up(follower), lead(leader, mntr), up(withZxid(follower, "0x200000001"))},
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=follower",
			problems:   []string{"follower server 3 (", "is in epoch 2, past leader server 2 (", "epoch 1: the leader is stale"},
		},
		{
			name:       "unreadable srvr",
			servers:    []fakeServer{up("hello\n"), lead(leader, mntr), up(follower)},
			wantLeader: 2,
			wantStates: "1=bad-answer 2=leader 3=follower",
			problems:   []string{"server 1 (", "answered srvr unreadably: srvr: no Mode line"},
		},
		{
			name:       "ctx deadline on a server that hangs",
			servers:    []fakeServer{up(follower), lead(leader, mntrOneSynced), up(hang)},
			timeout:    300 * time.Millisecond,
			wantLeader: 2,
			wantStates: "1=follower 2=leader 3=down",
			problems:   []string{"server 3 (", "does not answer", "context deadline exceeded", "has 1 synced followers, want 2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			servers, fakes := startEnsemble(t, tc.servers)
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()

			e := Check(ctx, servers, tc.opts...)
			if e.Took > timeout+2*time.Second {
				t.Errorf("Check took %v, past its %v deadline", e.Took, timeout)
			}
			problems := e.Problems()
			if e.Healthy() != (len(tc.problems) == 0) {
				t.Errorf("Healthy = %v; problems %q", e.Healthy(), problems)
			}
			if len(tc.problems) > 0 {
				checkInOrder(t, strings.Join(problems, "\n"), tc.problems)
			} else if len(problems) > 0 {
				t.Errorf("Problems = %q; want none", problems)
			}
			for i, p := range problems {
				if strings.Contains(p, "\n") {
					t.Errorf("problem %d spans lines: %q", i, p)
				}
			}

			l, ok := e.Leader()
			if ok != (tc.wantLeader != 0) || l.ID != tc.wantLeader {
				t.Errorf("Leader = %+v, %v; want ID %d", l, ok, tc.wantLeader)
			}
			s := e.String()
			if !strings.HasSuffix(s, "; servers "+tc.wantStates) && s != "healthy: servers "+tc.wantStates {
				t.Errorf("String = %q; want it to end with servers %s", s, tc.wantStates)
			}
			if wantPrefix := "healthy: "; len(tc.problems) > 0 {
				if !strings.HasPrefix(s, "unhealthy (") {
					t.Errorf("String = %q; want unhealthy", s)
				}
			} else if !strings.HasPrefix(s, wantPrefix) {
				t.Errorf("String = %q; want %q...", s, wantPrefix)
			}
			// mntr goes to servers in leader mode only.
			for i, f := range fakes {
				if f == nil {
					continue
				}
				isLeader := e.Servers[i].Mode() == ModeLeader
				if asked := f.wasAsked("mntr"); asked != isLeader {
					t.Errorf("server %d (%s): asked mntr %v; want %v", i+1, e.Servers[i].State(), asked, isLeader)
				}
			}
		})
	}
}

func TestCheckHealthyString(t *testing.T) {
	servers, _ := startEnsemble(t, []fakeServer{
		{srvr: testdata(t, "srvr_follower.txt")},
		{srvr: testdata(t, "srvr_leader.txt"), mntr: testdata(t, "mntr_leader.txt")},
		{srvr: testdata(t, "srvr_follower.txt")},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e := Check(ctx, servers)
	want := "healthy: leader 2 (zxid 0x100000046), 2 synced followers; servers 1=follower 2=leader 3=follower"
	if got := e.String(); got != want {
		t.Errorf("String =\n%s\nwant\n%s", got, want)
	}
	st, ok := e.Status(2)
	if !ok || st.Mntr == nil || st.Mntr.ZnodeCount != 152 || st.Srvr.NodeCount != 152 {
		t.Errorf("Status(2) = %+v, %v; want the leader's srvr and mntr", st, ok)
	}
	if _, ok := e.Status(4); ok {
		t.Errorf("Status(4) ok for a server not checked")
	}
}

func TestCheckNoServers(t *testing.T) {
	e := Check(context.Background(), nil)
	if p := e.Problems(); len(p) != 1 || p[0] != "no servers to check" {
		t.Errorf("Problems = %q; want no servers to check", p)
	}
}

// startEnsemble starts a fake for every server that is not down, and returns
// the servers, with IDs from 1, and the fakes (nil where down).
func startEnsemble(t *testing.T, specs []fakeServer) ([]Server, []*fakeZK) {
	t.Helper()
	servers := make([]Server, len(specs))
	fakes := make([]*fakeZK, len(specs))
	for i, spec := range specs {
		servers[i].ID = i + 1
		if spec.down {
			servers[i].Addr = deadAddr(t)
			continue
		}
		answers := map[string]string{"srvr": spec.srvr}
		if spec.mntr != "" {
			answers["mntr"] = spec.mntr
		}
		fakes[i] = startFake(t, answers)
		servers[i].Addr = fakes[i].addr
	}
	return servers, fakes
}

// checkInOrder checks that text holds every one of parts, each after the
// one before.
func checkInOrder(t *testing.T, text string, parts []string) {
	t.Helper()
	rest := text
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("problems\n%s\nlack %q (in that order: %q)", text, p, parts)
			return
		}
		rest = rest[i+len(p):]
	}
}
