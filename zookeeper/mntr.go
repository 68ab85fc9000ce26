package zookeeper

import (
	"fmt"
	"strconv"
	"strings"
)

// Mntr is the answer of the mntr four-letter word: the keys health needs,
// typed, and every key as it came.
//
// ZooKeeper 3.8 writes it in MonitorCommand, one "zk_<key>\t<value>" line
// per value: first ZooKeeperServer.dumpMonitorValues (zk_version,
// zk_server_state, and zk_peer_state on quorum servers), then every metric
// of the metrics provider in no set order. Integers print as integers,
// other numbers as Java doubles ("0.0", "0.4524", "1.0E-4"). Gauges with no
// value are left out: the leader-only gauges (zk_learners,
// zk_synced_followers, ...) appear only on a server that is leading.
//
// ZooKeeper's documentation still shows 3.4's zk_followers; since 3.6 the
// leader reports zk_learners instead. Learners takes either.
type Mntr struct {
	Version             string // full version, as srvr's
	ServerState         Mode
	PeerState           string // "leading - broadcast", "following - synchronization"; empty on standalone
	AvgLatency          float64
	MinLatency          int64
	MaxLatency          int64
	PacketsReceived     int64
	PacketsSent         int64
	NumAliveConnections int64
	OutstandingRequests int64
	ZnodeCount          int64
	WatchCount          int64
	EphemeralsCount     int64
	QuorumSize          int64 // quorum servers only
	// Leader holds the keys only a leading server exports; nil when the
	// answer has no zk_synced_followers.
	Leader *LeaderStats
	// All is every line of the answer, by key, zk_ prefix kept.
	All map[string]string
}

// LeaderStats are the mntr keys a leading server adds
// (LeaderZooKeeperServer.registerMetrics).
type LeaderStats struct {
	Learners                 int64 // connected learners: zk_learners (zk_followers before 3.6)
	SyncedFollowers          int64 // followers done syncing and forwarding: zk_synced_followers
	SyncedNonVotingFollowers int64
	SyncedObservers          int64
	PendingSyncs             int64
}

// Release is the version's release number, "3.8.4".
func (m Mntr) Release() string { return release(m.Version) }

// Int is the integer value of key ("zk_znode_count"), and whether the answer
// had it as an integer.
func (m Mntr) Int(key string) (int64, bool) {
	v, ok := m.All[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// Float is the numeric value of key ("zk_avg_latency"), and whether the
// answer had it as a number.
func (m Mntr) Float(key string) (float64, bool) {
	v, ok := m.All[key]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// ParseMntr parses the answer of mntr. A server that is not serving
// requests gives an error wrapping ErrNotServing. zk_server_state must be
// there; a line with no tab, or a typed key whose value is not a number, is
// an error.
func ParseMntr(answer string) (Mntr, error) {
	m := Mntr{All: map[string]string{}}
	if isNotServing(answer) {
		return m, fmt.Errorf("mntr: %w", ErrNotServing)
	}
	for _, line := range lines(answer) {
		key, value, ok := strings.Cut(line, "\t")
		if !ok {
			return m, fmt.Errorf("mntr: line %q is not key<TAB>value", line)
		}
		m.All[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	state, ok := m.All["zk_server_state"]
	if !ok {
		return m, fmt.Errorf("mntr: no zk_server_state among %d keys", len(m.All))
	}
	m.ServerState = Mode(state)
	m.Version = m.All["zk_version"]
	m.PeerState = m.All["zk_peer_state"]

	p := mntrParser{m: &m}
	p.float("zk_avg_latency", &m.AvgLatency)
	p.int("zk_min_latency", &m.MinLatency)
	p.int("zk_max_latency", &m.MaxLatency)
	p.int("zk_packets_received", &m.PacketsReceived)
	p.int("zk_packets_sent", &m.PacketsSent)
	p.int("zk_num_alive_connections", &m.NumAliveConnections)
	p.int("zk_outstanding_requests", &m.OutstandingRequests)
	p.int("zk_znode_count", &m.ZnodeCount)
	p.int("zk_watch_count", &m.WatchCount)
	p.int("zk_ephemerals_count", &m.EphemeralsCount)
	p.int("zk_quorum_size", &m.QuorumSize)
	if p.has("zk_synced_followers") {
		var l LeaderStats
		p.int("zk_synced_followers", &l.SyncedFollowers)
		if p.has("zk_learners") {
			p.int("zk_learners", &l.Learners)
		} else {
			p.int("zk_followers", &l.Learners)
		}
		p.int("zk_synced_non_voting_followers", &l.SyncedNonVotingFollowers)
		p.int("zk_synced_observers", &l.SyncedObservers)
		p.int("zk_pending_syncs", &l.PendingSyncs)
		m.Leader = &l
	}
	if p.err != nil {
		return m, fmt.Errorf("mntr: %w", p.err)
	}
	return m, nil
}

// mntrParser fills typed fields from Mntr.All, keeping the first error.
// Absent keys, and MonitorCommand's "null" for a value it did not have,
// leave the field at zero.
type mntrParser struct {
	m   *Mntr
	err error
}

func (p *mntrParser) has(key string) bool {
	v, ok := p.m.All[key]
	return ok && v != "null"
}

func (p *mntrParser) int(key string, dst *int64) {
	if p.err != nil || !p.has(key) {
		return
	}
	n, err := strconv.ParseInt(p.m.All[key], 10, 64)
	if err != nil {
		p.err = fmt.Errorf("%s: %w", key, err)
		return
	}
	*dst = n
}

func (p *mntrParser) float(key string, dst *float64) {
	if p.err != nil || !p.has(key) {
		return
	}
	f, err := strconv.ParseFloat(p.m.All[key], 64)
	if err != nil {
		p.err = fmt.Errorf("%s: %w", key, err)
		return
	}
	*dst = f
}
