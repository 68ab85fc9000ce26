package zookeeper

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const version384 = "3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c, built on 2024-02-12 22:16 UTC"

func TestParseSrvr(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		want    Srvr
		wantErr error
		errHas  string
	}{
		{
			name:   "leader",
			answer: testdata(t, "srvr_leader.txt"),
			want: Srvr{
				Version: version384, Latency: Latency{Min: 0, Avg: 0.4524, Max: 13},
				Received: 1874, Sent: 1873, Connections: 4, Outstanding: 0,
				Zxid: 0x100000046, Mode: ModeLeader, NodeCount: 152,
				ProposalSizes: &BufferSizes{Last: 48, Min: 36, Max: 391},
			},
		},
		{
			name:   "follower",
			answer: testdata(t, "srvr_follower.txt"),
			want: Srvr{
				Version: version384, Latency: Latency{Min: 0, Avg: 0.2857, Max: 4},
				Received: 611, Sent: 610, Connections: 2,
				Zxid: 0x100000046, Mode: ModeFollower, NodeCount: 152,
			},
		},
		{
			name:   "standalone, Java's 1.0E-4",
			answer: testdata(t, "srvr_standalone.txt"),
			want: Srvr{
				Version: version384, Latency: Latency{Min: 0, Avg: 0.0001, Max: 1},
				Received: 12, Sent: 11, Connections: 1,
				Zxid: 0x1a, Mode: ModeStandalone, NodeCount: 5,
			},
		},
		{
			name:   "read-only, CRLF",
			answer: "Zookeeper version: " + version384 + "\r\nREAD-ONLY mode; serving only read-only clients\r\nLatency min/avg/max: 0/0.0/0\r\nZxid: 0x0\r\nMode: read-only\r\n",
			want:   Srvr{Version: version384, ReadOnly: true, Mode: ModeReadOnly},
		},
		{name: "not serving", answer: testdata(t, "srvr_not_serving.txt"), wantErr: ErrNotServing},
		{name: "empty", answer: "", errHas: "empty answer"},
		{name: "no mode", answer: "Zookeeper version: x\nZxid: 0x1\n", errHas: "no Mode line"},
		{name: "no zxid", answer: "Zookeeper version: x\nMode: leader\n", errHas: "no Zxid line"},
		{name: "bad zxid", answer: "Zxid: 100\nMode: leader\n", errHas: "does not start with 0x"},
		{name: "bad latency", answer: "Latency min/avg/max: 0/x/1\nZxid: 0x1\nMode: leader\n", errHas: "Latency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSrvr(tc.answer)
			wantErr := tc.wantErr != nil || tc.errHas != ""
			if wantErr {
				if err == nil {
					t.Fatalf("ParseSrvr = %+v, nil; want an error", got)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("ParseSrvr error %v; want one wrapping %v", err, tc.wantErr)
				}
				if tc.errHas != "" && !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("ParseSrvr error %q; want it to contain %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSrvr: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseSrvr =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestSrvrHelpers(t *testing.T) {
	s, err := ParseSrvr(testdata(t, "srvr_leader.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Release(); got != "3.8.4" {
		t.Errorf("Release = %q; want 3.8.4", got)
	}
	if got := s.Epoch(); got != 1 {
		t.Errorf("Epoch = %d; want 1", got)
	}
	if got := ZxidCounter(s.Zxid); got != 0x46 {
		t.Errorf("ZxidCounter = %d; want %d", got, 0x46)
	}
	if got := release("3.9.0-SNAPSHOT-abc, built on x"); got != "3.9.0" {
		t.Errorf("release = %q; want 3.9.0", got)
	}
}

func TestParseMntr(t *testing.T) {
	leader, err := ParseMntr(testdata(t, "mntr_leader.txt"))
	if err != nil {
		t.Fatalf("ParseMntr(leader): %v", err)
	}
	want := Mntr{
		Version: version384, ServerState: ModeLeader, PeerState: "leading - broadcast",
		AvgLatency: 0.4524, MinLatency: 0, MaxLatency: 13,
		PacketsReceived: 1874, PacketsSent: 1873, NumAliveConnections: 4,
		ZnodeCount: 152, WatchCount: 21, EphemeralsCount: 3, QuorumSize: 3,
		Leader: &LeaderStats{Learners: 2, SyncedFollowers: 2},
		All:    leader.All,
	}
	if !reflect.DeepEqual(leader, want) {
		t.Errorf("ParseMntr(leader) =\n%+v\nwant\n%+v", leader, want)
	}
	if n := len(leader.All); n != 57 {
		t.Errorf("len(All) = %d; want 57 (every line)", n)
	}
	if v, ok := leader.Int("zk_p99_readlatency"); !ok || v != 2 {
		t.Errorf("Int(zk_p99_readlatency) = %d, %v; want 2, true", v, ok)
	}
	if v, ok := leader.Float("zk_avg_readlatency"); !ok || v != 0.0001 {
		t.Errorf("Float(zk_avg_readlatency) = %v, %v; want 0.0001, true", v, ok)
	}
	if _, ok := leader.Int("zk_avg_fsynctime"); ok {
		t.Errorf("Int(zk_avg_fsynctime) ok for a double")
	}
	if _, ok := leader.Int("zk_missing"); ok {
		t.Errorf("Int(zk_missing) ok")
	}
	if got := leader.Release(); got != "3.8.4" {
		t.Errorf("Release = %q", got)
	}

	follower, err := ParseMntr(testdata(t, "mntr_follower.txt"))
	if err != nil {
		t.Fatalf("ParseMntr(follower): %v", err)
	}
	if follower.ServerState != ModeFollower || follower.Leader != nil || follower.ZnodeCount != 152 {
		t.Errorf("ParseMntr(follower) = state %q, leader %+v, znodes %d; want follower, nil, 152",
			follower.ServerState, follower.Leader, follower.ZnodeCount)
	}

	// zookeeperAdmin.md's sample, from 3.4: zk_followers, not zk_learners.
	old, err := ParseMntr("zk_version\t3.4.0\nzk_server_state\tleader\nzk_followers\t4\nzk_synced_followers\t4\nzk_pending_syncs\t0\n")
	if err != nil {
		t.Fatalf("ParseMntr(3.4): %v", err)
	}
	if old.Leader == nil || old.Leader.Learners != 4 || old.Leader.SyncedFollowers != 4 {
		t.Errorf("ParseMntr(3.4).Leader = %+v; want 4 learners, 4 synced", old.Leader)
	}
}

func TestParseMntrErrors(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		wantErr error
		errHas  string
	}{
		{name: "not serving", answer: testdata(t, "srvr_not_serving.txt"), wantErr: ErrNotServing},
		{name: "no tab", answer: "zk_server_state leader\n", errHas: "not key<TAB>value"},
		{name: "no state", answer: "zk_version\t3.8.4\n", errHas: "no zk_server_state"},
		{name: "bad number", answer: "zk_server_state\tleader\nzk_synced_followers\ttwo\n", errHas: "zk_synced_followers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMntr(tc.answer)
			if err == nil {
				t.Fatal("ParseMntr: nil error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v; want one wrapping %v", err, tc.wantErr)
			}
			if tc.errHas != "" && !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %q; want it to contain %q", err, tc.errHas)
			}
		})
	}
}
