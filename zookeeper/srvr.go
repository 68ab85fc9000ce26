package zookeeper

import (
	"fmt"
	"strconv"
	"strings"
)

// Mode is a server's role, as srvr's "Mode:" line and mntr's
// zk_server_state name it (the getState of ZooKeeperServer and of its
// quorum subclasses).
type Mode string

// The modes a ZooKeeper 3.8 server reports.
const (
	ModeLeader     Mode = "leader"
	ModeFollower   Mode = "follower"
	ModeObserver   Mode = "observer"
	ModeStandalone Mode = "standalone"
	ModeReadOnly   Mode = "read-only" // partitioned, with readonlymode.enabled
)

// Latency is srvr's "Latency min/avg/max:" line: request latencies in
// milliseconds since the server started or its stats were last reset.
type Latency struct {
	Min int64
	Avg float64 // rounded to 4 decimals by the server
	Max int64
}

// BufferSizes is a last/min/max line of srvr, in bytes.
type BufferSizes struct {
	Last, Min, Max int64
}

// Srvr is the answer of the srvr four-letter word.
//
// ZooKeeper 3.8 writes it in StatCommand: "Zookeeper version: <full
// version>", "READ-ONLY mode; serving only read-only clients" when
// read-only, then ServerStats.toString ("Latency min/avg/max: 0/0.5/13",
// "Received: N", "Sent: N", "Connections: N", "Outstanding: N",
// "Zxid: 0x<hex>", "Mode: <mode>"), then "Node count: N", and on the leader
// "Proposal sizes last/min/max: a/b/c".
type Srvr struct {
	Version     string // full version: "3.8.4-<git hash>, built on <date>"
	ReadOnly    bool
	Latency     Latency
	Received    int64 // packets
	Sent        int64 // packets
	Connections int64 // live client connections
	Outstanding int64 // queued requests
	Zxid        int64 // last processed zxid: epoch<<32 | counter
	Mode        Mode
	NodeCount   int64
	// ProposalSizes is set by the leader only.
	ProposalSizes *BufferSizes
}

// Release is the version's release number, "3.8.4" of
// "3.8.4-9316c2a..., built on ...".
func (s Srvr) Release() string { return release(s.Version) }

// Epoch is the leader epoch of the server's last zxid (its high 32 bits).
func (s Srvr) Epoch() int64 { return ZxidEpoch(s.Zxid) }

// ZxidEpoch is the leader epoch of a zxid: its high 32 bits.
func ZxidEpoch(zxid int64) int64 { return int64(uint64(zxid) >> 32) }

// ZxidCounter is the transaction counter of a zxid within its epoch: its
// low 32 bits.
func ZxidCounter(zxid int64) int64 { return zxid & 0xffffffff }

// ParseSrvr parses the answer of srvr. A server that is not serving
// requests gives an error wrapping ErrNotServing. Mode and Zxid must be
// there; lines it does not know are ignored.
func ParseSrvr(answer string) (Srvr, error) {
	var s Srvr
	if isNotServing(answer) {
		return s, fmt.Errorf("srvr: %w", ErrNotServing)
	}
	if strings.TrimSpace(answer) == "" {
		return s, fmt.Errorf("srvr: empty answer")
	}
	var haveZxid bool
	for _, line := range lines(answer) {
		if line == "READ-ONLY mode; serving only read-only clients" {
			s.ReadOnly = true
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		var err error
		switch key {
		case "Zookeeper version":
			s.Version = value
		case "Latency min/avg/max":
			s.Latency, err = parseLatency(value)
		case "Received":
			s.Received, err = parseInt(value)
		case "Sent":
			s.Sent, err = parseInt(value)
		case "Connections":
			s.Connections, err = parseInt(value)
		case "Outstanding":
			s.Outstanding, err = parseInt(value)
		case "Zxid":
			s.Zxid, err = parseZxid(value)
			haveZxid = err == nil
		case "Mode":
			s.Mode = Mode(value)
		case "Node count":
			s.NodeCount, err = parseInt(value)
		case "Proposal sizes last/min/max":
			var b BufferSizes
			b, err = parseBufferSizes(value)
			s.ProposalSizes = &b
		}
		if err != nil {
			return s, fmt.Errorf("srvr: %s: %w", key, err)
		}
	}
	switch {
	case s.Mode == "":
		return s, fmt.Errorf("srvr: no Mode line in %q", firstLine(answer))
	case !haveZxid:
		return s, fmt.Errorf("srvr: no Zxid line in %q", firstLine(answer))
	}
	return s, nil
}

// parseZxid parses ServerStats' "0x" + Long.toHexString(zxid): lowercase,
// unpadded, and a negative zxid in two's complement.
func parseZxid(v string) (int64, error) {
	hex, ok := strings.CutPrefix(v, "0x")
	if !ok {
		return 0, fmt.Errorf("zxid %q does not start with 0x", v)
	}
	u, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("zxid %q: %w", v, err)
	}
	return int64(u), nil
}

// parseLatency parses "min/avg/max", avg being Java's Double.toString of a
// double (0.0, 0.4524, or 1.0E-4 below 0.001).
func parseLatency(v string) (Latency, error) {
	parts := strings.Split(v, "/")
	if len(parts) != 3 {
		return Latency{}, fmt.Errorf("%q is not min/avg/max", v)
	}
	var l Latency
	var err error
	if l.Min, err = parseInt(parts[0]); err != nil {
		return l, err
	}
	if l.Avg, err = strconv.ParseFloat(parts[1], 64); err != nil {
		return l, fmt.Errorf("avg %q: %w", parts[1], err)
	}
	if l.Max, err = parseInt(parts[2]); err != nil {
		return l, err
	}
	return l, nil
}

// parseBufferSizes parses BufferStats.toString: "last/min/max".
func parseBufferSizes(v string) (BufferSizes, error) {
	parts := strings.Split(v, "/")
	if len(parts) != 3 {
		return BufferSizes{}, fmt.Errorf("%q is not last/min/max", v)
	}
	var b BufferSizes
	var err error
	for i, p := range []*int64{&b.Last, &b.Min, &b.Max} {
		if *p, err = parseInt(parts[i]); err != nil {
			return b, err
		}
	}
	return b, nil
}

func parseInt(v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not an integer: %w", err)
	}
	return n, nil
}

// lines splits an answer into its lines, without line ends or blank lines.
func lines(answer string) []string {
	var out []string
	for _, l := range strings.Split(answer, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func firstLine(answer string) string {
	if ls := lines(answer); len(ls) > 0 {
		return ls[0]
	}
	return ""
}

func isNotServing(answer string) bool {
	return strings.TrimSpace(answer) == notServing
}

// release cuts a full version, "3.8.4-<hash>, built on <date>", to its
// release number. Version.getVersion puts a qualifier after a dash
// (3.9.0-SNAPSHOT); the qualifier is dropped too.
func release(full string) string {
	v, _, _ := strings.Cut(full, ",")
	v, _, _ = strings.Cut(v, "-")
	return strings.TrimSpace(v)
}
