package zookeeper

import (
	"errors"
	"fmt"
	"strings"
)

// Healthy reports whether Problems is empty.
func (e Ensemble) Healthy() bool { return len(e.Problems()) == 0 }

// Problems names, one line each, everything that keeps e from being
// healthy: a server that does not answer srvr (with the error), that
// answers it is not serving requests, whose answer does not parse, that is
// standalone inside an ensemble or read-only; no leader, or more than one;
// a leader whose mntr fails, or that has fewer synced followers
// (zk_synced_followers) than the ensemble's other voting servers; a
// follower whose zxid is past the leader's epoch, or that trails the
// leader by more than MaxZxidLag transactions within it.
//
// A single server in standalone mode needs no leader.
func (e Ensemble) Problems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	n := len(e.Servers)
	if n == 0 {
		add("no servers to check")
		return out
	}
	serving := 0
	for _, s := range e.Servers {
		name := serverName(s.Server)
		switch {
		case s.Err == nil:
			serving++
		case errors.Is(s.Err, ErrNotServing):
			add("%s is not serving requests: no quorum, or electing a leader", name)
			continue
		case s.Answered:
			add("%s answered srvr unreadably: %v", name, s.Err)
			continue
		default:
			add("%s does not answer: %v", name, s.Err)
			continue
		}
		if n > 1 && s.Srvr.Mode == ModeStandalone {
			add("%s is in standalone mode inside a %d-server ensemble", name, n)
		}
		if s.Srvr.ReadOnly || s.Srvr.Mode == ModeReadOnly {
			add("%s is read-only: it is cut off from the quorum", name)
		}
	}
	if n == 1 && e.Servers[0].Mode() == ModeStandalone {
		return out
	}

	leaders := e.Leaders()
	switch len(leaders) {
	case 0:
		add("no leader (%d of %d servers serving)", serving, n)
	case 1:
		out = append(out, e.leaderProblems(leaders[0])...)
	default:
		names := make([]string, len(leaders))
		for i, l := range leaders {
			names[i] = fmt.Sprintf("%s zxid 0x%x", serverName(l.Server), l.Srvr.Zxid)
		}
		add("%d servers claim to lead: %s", len(leaders), strings.Join(names, ", "))
	}
	return out
}

// leaderProblems are the problems of an ensemble with the one leader l:
// its mntr, its synced followers, and how its followers' zxids compare.
func (e Ensemble) leaderProblems(l ServerStatus) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	name := "leader " + serverName(l.Server)

	observers := 0
	for _, s := range e.Servers {
		if s.Mode() == ModeObserver {
			observers++
		}
	}
	// Every server but the leader and the observers seen is a voter that
	// should follow. An observer that does not answer counts as a follower:
	// Check cannot tell it from one.
	want := int64(len(e.Servers) - 1 - observers)
	switch {
	case l.MntrErr != nil:
		add("%s: cannot count synced followers: %v", name, l.MntrErr)
	case l.Mntr == nil:
		add("%s: mntr was not asked", name)
	case l.Mntr.ServerState != ModeLeader:
		add("%s said %q in mntr: leadership changed during the check", name, l.Mntr.ServerState)
	case l.Mntr.Leader == nil:
		add("%s: mntr has no zk_synced_followers: it is not leading any more", name)
	case l.Mntr.Leader.SyncedFollowers < want:
		add("%s has %d synced followers, want %d (%d learners connected)",
			name, l.Mntr.Leader.SyncedFollowers, want, l.Mntr.Leader.Learners)
	}

	// Zxids. A zxid is epoch<<32 | counter, and the epoch goes up with
	// every election: the new leader starts at (epoch+1)<<32 while its
	// followers keep the zxid of the last transaction of the old epoch
	// until the first write of the new one reaches them. Raw zxids of
	// different epochs are therefore not comparable, and a follower in an
	// older epoch is normal right after an election (whether it is synced
	// is zk_synced_followers' business, above). Only two things are judged:
	// a follower in a newer epoch than the leader's, which means a later
	// election happened without this "leader" (it is stale, and about to
	// step down), and, within the same epoch, a follower whose counter
	// trails the leader's by more than MaxZxidLag.
	le := ZxidEpoch(l.Srvr.Zxid)
	for _, s := range e.Servers {
		if s.Err != nil || (s.Srvr.Mode != ModeFollower && s.Srvr.Mode != ModeObserver) {
			continue
		}
		se := ZxidEpoch(s.Srvr.Zxid)
		switch {
		case se > le:
			add("%s %s is in epoch %d, past %s's epoch %d: the leader is stale",
				s.Srvr.Mode, serverName(s.Server), se, name, le)
		case se == le && e.MaxZxidLag >= 0:
			if lag := ZxidCounter(l.Srvr.Zxid) - ZxidCounter(s.Srvr.Zxid); lag > e.MaxZxidLag {
				add("%s %s trails %s by %d transactions (zxid 0x%x against 0x%x, max %d)",
					s.Srvr.Mode, serverName(s.Server), name, lag, s.Srvr.Zxid, l.Srvr.Zxid, e.MaxZxidLag)
			}
		}
	}
	return out
}

// String summarizes e on one line: healthy with its leader, or its
// problems; then every server's state by ID.
func (e Ensemble) String() string {
	states := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		states[i] = shortName(s.Server) + "=" + s.State()
	}
	all := strings.Join(states, " ")
	if p := e.Problems(); len(p) > 0 {
		return fmt.Sprintf("unhealthy (%d problems): %s; servers %s", len(p), strings.Join(p, "; "), all)
	}
	if ls := e.Leaders(); len(ls) == 1 {
		l := ls[0]
		synced := "?"
		if l.Mntr != nil && l.Mntr.Leader != nil {
			synced = fmt.Sprint(l.Mntr.Leader.SyncedFollowers)
		}
		return fmt.Sprintf("healthy: leader %s (zxid 0x%x), %s synced followers; servers %s",
			shortName(l.Server), l.Srvr.Zxid, synced, all)
	}
	return "healthy: servers " + all
}

func serverName(s Server) string {
	if s.ID == 0 {
		return "server " + s.Addr
	}
	return fmt.Sprintf("server %d (%s)", s.ID, s.Addr)
}

// shortName names s by its ID, or by its address when the ID is unknown.
func shortName(s Server) string {
	if s.ID == 0 {
		return s.Addr
	}
	return fmt.Sprint(s.ID)
}
