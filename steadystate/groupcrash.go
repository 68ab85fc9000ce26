package steadystate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate/groupcheck"
)

// ErrMemberCrashed is returned by a dial of a crashed member's client.
var ErrMemberCrashed = errors.New("steadystate: the group member crashed")

// ErrNoGroup is returned by a GroupControl whose run has not started its
// group, or has ended.
var ErrNoGroup = errors.New("steadystate: no consumer group runs")

// GroupControl crashes members of a run's application group and starts
// new ones in their place, as a process crash and a restart would: a
// story's client fault. Give it in GroupConfig.Control; its members then
// dial through it. The zero value is not usable: NewGroupControl.
type GroupControl struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	mu   sync.Mutex
	g    *appGroup // nil until the run starts the group, and after it closes
}

// NewGroupControl returns a GroupControl whose members dial with dial
// (nil: net.Dialer's). A member fault needs PLAINTEXT brokers: its
// members' connections are plain TCP.
func NewGroupControl(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *GroupControl {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return &GroupControl{dial: dial}
}

func (gc *GroupControl) attach(g *appGroup) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.g = g
}

// detach forgets g, if it is the group attached.
func (gc *GroupControl) detach(g *appGroup) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.g == g {
		gc.g = nil
	}
}

// group is the running group, or an error when there is none.
func (gc *GroupControl) group() (*appGroup, error) {
	if gc.g == nil {
		return nil, ErrNoGroup
	}
	return gc.g, nil
}

// slot is the running group, when it has a slot i.
func (gc *GroupControl) slot(i int) (*appGroup, error) {
	g, err := gc.group()
	if err == nil && (i < 0 || i >= len(g.members)) {
		err = fmt.Errorf("steadystate: no group member %d of %d", i, len(g.members))
	}
	return g, err
}

// Crash crashes the member in slot i (0 to Members-1): at once it polls,
// processes and commits no more, sends no LeaveGroup, and its connections
// close, as a process's do when it dies; the coordinator learns of it only
// when its session times out. The partitions it owned are reported
// revoked now, since the application behind it is gone. It returns the
// member's name and those partitions. Crashing a crashed member does
// nothing.
func (gc *GroupControl) Crash(i int) (string, []int32, error) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	g, err := gc.slot(i)
	if err != nil {
		return "", nil, err
	}
	m := g.members[i]
	return m.name, m.crash(), nil
}

// Cut cuts the member in slot i off from the brokers, as a network
// partition between it and them would: its connections close and it can
// open none, but the application behind it goes on, and keeps its
// partitions until its client says they are lost. Heal ends the cut. It
// returns the member's name. Cutting a crashed member does nothing.
func (gc *GroupControl) Cut(i int) (string, error) {
	return gc.live(i, func(m *member) { m.dialer.cut() })
}

// Heal lets the member in slot i reach the brokers again. Healing a member
// not cut, or crashed, does nothing.
func (gc *GroupControl) Heal(i int) (string, error) {
	return gc.live(i, func(m *member) { m.dialer.heal() })
}

// live runs f on the member in slot i unless it crashed, and returns its
// name.
func (gc *GroupControl) live(i int, f func(*member)) (string, error) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	g, err := gc.slot(i)
	if err != nil {
		return "", err
	}
	m := g.members[i]
	if !m.hasCrashed() {
		f(m)
	}
	return m.name, nil
}

// Restart starts a new member in slot i, as a restarted process: a new
// client, a new member ID, and a name of its own (member-<i>.<n>). It
// returns the slot's member, and whether it started one: it does nothing
// when the slot's member has not crashed.
func (gc *GroupControl) Restart(i int) (string, bool, error) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	g, err := gc.slot(i)
	if err != nil {
		return "", false, err
	}
	if !g.members[i].hasCrashed() {
		return g.members[i].name, false, nil
	}
	g.restarts[i]++
	m, err := g.newMember(fmt.Sprintf("member-%d.%d", i, g.restarts[i]))
	if err != nil {
		return "", false, err
	}
	g.members[i] = m
	g.start(m)
	return m.name, true, nil
}

// Owned lists the partitions the member in slot i owns now (none once it
// crashed).
func (gc *GroupControl) Owned(i int) ([]int32, error) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	g, err := gc.slot(i)
	if err != nil {
		return nil, err
	}
	m := g.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []int32
	for p := range m.owned {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps, nil
}

// Unowned lists the partitions that no live member owns now.
func (gc *GroupControl) Unowned() ([]int32, error) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	g, err := gc.group()
	if err != nil {
		return nil, err
	}
	return g.chk.UnownedNow(), nil
}

// crash ends the member (see GroupControl.Crash) and returns the
// partitions it owned.
func (m *member) crash() []int32 {
	m.cancel()     // its requests in flight end
	m.dialer.cut() // its connections close, and it can open none
	m.life.Lock()  // between two of its steps
	defer m.life.Unlock()
	if m.crashed {
		return nil
	}
	m.crashed = true
	m.mu.Lock()
	var owned []int32
	for p := range m.owned {
		owned = append(owned, p)
	}
	clear(m.owned)
	clear(m.next)
	clear(m.committed)
	m.mu.Unlock()
	slices.Sort(owned)
	now := time.Now()
	for _, p := range owned {
		m.chk.Observe(groupcheck.Event{At: now, Member: m.name, Kind: groupcheck.Revoked, Partition: p})
	}
	return owned
}

func (m *member) hasCrashed() bool {
	m.life.Lock()
	defer m.life.Unlock()
	return m.crashed
}

// alive runs f unless the member has crashed, and reports whether it
// ran: a crash comes between two of the member's steps, never inside one,
// and nothing the member does after it is reported.
func (m *member) alive(f func()) bool {
	m.life.Lock()
	defer m.life.Unlock()
	if m.crashed {
		return false
	}
	f()
	return true
}

// cutDialer dials through base until cut, and then closes every
// connection it made and refuses new ones, until healed. A member of a group without a
// Control has none.
type cutDialer struct {
	base  func(ctx context.Context, network, addr string) (net.Conn, error)
	mu    sync.Mutex
	done  bool
	conns map[*trackedConn]struct{} // open ones: a closed one leaves
}

func newCutDialer(base func(ctx context.Context, network, addr string) (net.Conn, error)) *cutDialer {
	if base == nil {
		base = (&net.Dialer{}).DialContext
	}
	return &cutDialer{base: base, conns: map[*trackedConn]struct{}{}}
}

func (d *cutDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	done := d.done
	d.mu.Unlock()
	if done {
		return nil, ErrMemberCrashed
	}
	c, err := d.base(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		c.Close()
		return nil, ErrMemberCrashed
	}
	tc := &trackedConn{Conn: c, d: d}
	d.conns[tc] = struct{}{}
	return tc, nil
}

// cut closes every connection and refuses new ones; on a nil d it does
// nothing.
func (d *cutDialer) cut() {
	if d == nil {
		return
	}
	d.mu.Lock()
	conns := d.conns
	d.done, d.conns = true, map[*trackedConn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

// heal lets d dial again; on a nil d it does nothing.
func (d *cutDialer) heal() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = false
}

// trackedConn leaves its dialer's set when closed.
type trackedConn struct {
	net.Conn
	d *cutDialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
