package zookeeper

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// DefaultMaxZxidLag is the default of WithMaxZxidLag: how many transactions
// a follower may trail the leader by, within the same epoch. Check asks
// every server at once and a follower applies a commit milliseconds after
// the leader, so a healthy follower trails by the handful of writes in
// flight; a Kafka cluster writes to ZooKeeper at most some hundreds of
// times a second, so 1000 behind is a follower that stopped applying for
// seconds.
const DefaultMaxZxidLag = 1000

// Server is one member of an ensemble, as the caller knows it.
type Server struct {
	ID   int    // myid, the N of server.N in zoo.cfg; 0 if the caller does not know it
	Addr string // client address, "host:port" (port 2181)
}

// ServerStatus is what Check saw of one server.
type ServerStatus struct {
	Server Server
	// Answered is whether srvr got an answer at all, even one that says the
	// server is not serving.
	Answered bool
	// Answer is srvr's answer, as it came.
	Answer string
	// Srvr is srvr's answer parsed; meaningful only when Err is nil.
	Srvr Srvr
	// Err is why there is no usable Srvr: no answer (dial, read, ctx), an
	// answer wrapping ErrNotServing, or one that does not parse.
	Err error
	// Mntr is mntr's answer, asked of servers in leader mode only; nil when
	// not asked or when MntrErr is set.
	Mntr *Mntr
	// MntrErr is why a leader's mntr gave nothing usable (ErrNotWhitelisted
	// when mntr is not in the whitelist).
	MntrErr error
}

// Mode is the server's mode, or "" when srvr gave none.
func (s ServerStatus) Mode() Mode {
	if s.Err != nil {
		return ""
	}
	return s.Srvr.Mode
}

// Serving reports whether the server answered srvr with its stats, that
// is, it is serving requests.
func (s ServerStatus) Serving() bool { return s.Err == nil }

// State names the server's state in a word: its mode when serving, else
// "not-serving", "bad-answer" or "down".
func (s ServerStatus) State() string {
	switch {
	case s.Err == nil:
		return string(s.Srvr.Mode)
	case errors.Is(s.Err, ErrNotServing):
		return "not-serving"
	case s.Answered:
		return "bad-answer"
	default:
		return "down"
	}
}

// Ensemble is what Check saw of an ensemble. Its Problems say whether it is
// healthy.
type Ensemble struct {
	// Servers are the servers' statuses, in the order given to Check.
	Servers []ServerStatus
	// MaxZxidLag is the lag limit Problems applies; negative: no limit.
	MaxZxidLag int64
	// Took is how long the check took.
	Took time.Duration

	dial DialFunc // how Check connects; nil: net.Dialer
}

// CheckOption sets how Check judges an ensemble.
type CheckOption func(*Ensemble)

// WithMaxZxidLag sets how many transactions a follower may trail the
// leader by, within the leader's epoch (DefaultMaxZxidLag by default). A
// negative n turns the comparison off.
func WithMaxZxidLag(n int64) CheckOption {
	return func(e *Ensemble) { e.MaxZxidLag = n }
}

// WithDialer makes Check connect through dial (a resolver of the
// cluster's names, say) instead of a plain net.Dialer.
func WithDialer(dial DialFunc) CheckOption {
	return func(e *Ensemble) { e.dial = dial }
}

// Check asks every server for srvr at once, and each server that says it
// leads for mntr right after, and returns what it saw. It fails on nothing:
// a server that does not answer before ctx is done is a problem of the
// Ensemble. Check has no timeout of its own; give ctx a deadline of a few
// seconds, as a dead pod's IP may never refuse the connection.
func Check(ctx context.Context, servers []Server, opts ...CheckOption) Ensemble {
	start := time.Now()
	e := Ensemble{Servers: make([]ServerStatus, len(servers)), MaxZxidLag: DefaultMaxZxidLag}
	for _, o := range opts {
		o(&e)
	}
	dial := e.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	var wg sync.WaitGroup
	for i, srv := range servers {
		st := &e.Servers[i]
		st.Server = srv
		// Each server's mntr follows its own srvr at once: a server that
		// hangs until ctx is done must not leave the leader no time.
		wg.Go(func() { st.check(ctx, dial) })
	}
	wg.Wait()
	e.Took = time.Since(start)
	return e
}

// check asks the server for srvr and, if it says it leads, for mntr.
func (st *ServerStatus) check(ctx context.Context, dial DialFunc) {
	answer, err := AskVia(ctx, dial, st.Server.Addr, "srvr")
	st.Answer = answer
	if err != nil {
		st.Err = err
		return
	}
	st.Answered = true
	if st.Srvr, st.Err = ParseSrvr(answer); st.Err != nil || st.Srvr.Mode != ModeLeader {
		return
	}
	answer, err = AskVia(ctx, dial, st.Server.Addr, "mntr")
	if err != nil {
		st.MntrErr = err
		return
	}
	m, err := ParseMntr(answer)
	if err != nil {
		st.MntrErr = err
		return
	}
	st.Mntr = &m
}

// Leaders are the statuses of the servers in leader mode: one in a healthy
// ensemble.
func (e Ensemble) Leaders() []ServerStatus {
	var out []ServerStatus
	for _, s := range e.Servers {
		if s.Mode() == ModeLeader {
			out = append(out, s)
		}
	}
	return out
}

// Leader is the server that leads, and whether exactly one server said it
// does. A spec that kills the leader kills this one.
func (e Ensemble) Leader() (Server, bool) {
	l := e.Leaders()
	if len(l) != 1 {
		return Server{}, false
	}
	return l[0].Server, true
}

// Status is the status of the server with the given ID, and whether Check
// was given that server.
func (e Ensemble) Status(id int) (ServerStatus, bool) {
	for _, s := range e.Servers {
		if s.Server.ID == id {
			return s, true
		}
	}
	return ServerStatus{}, false
}
