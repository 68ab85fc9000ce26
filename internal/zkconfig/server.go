package zkconfig

import (
	"fmt"
	"strconv"
	"strings"
)

// Server is one server.N entry of zoo.cfg (ZooKeeper 3.5 and later):
//
//	server.N=host:peerPort:electionPort[:role][|host:peerPort:electionPort[:role]]...[;[clientHost:]clientPort]
type Server struct {
	// ID is N.
	ID int64
	// Addrs are the server's quorum addresses: one, or several separated
	// by '|' (ZooKeeper's multi-address feature).
	Addrs []Addr
	// ClientHost is the client part's host; "" when it gives a port only,
	// where ZooKeeper listens on every address (0.0.0.0).
	ClientHost string
	// ClientPort is the client part's port; 0 when there is no client part.
	ClientPort int
}

// Addr is one quorum address of a server.
type Addr struct {
	// Host is a name or an IP address; an IPv6 address is kept without its
	// brackets.
	Host         string
	PeerPort     int // followers connect to the leader here (2888)
	ElectionPort int // leader election (3888)
	// Role is the role as written ("participant" or "observer", in any
	// case), or "" when the address gives none.
	Role string
}

// Key returns s's key: server.N.
func (s Server) Key() string { return "server." + strconv.FormatInt(s.ID, 10) }

// Value returns s's value, in ParseServer's form.
func (s Server) Value() string {
	parts := make([]string, len(s.Addrs))
	for i, a := range s.Addrs {
		p := joinHost(a.Host) + ":" + strconv.Itoa(a.PeerPort) + ":" + strconv.Itoa(a.ElectionPort)
		if a.Role != "" {
			p += ":" + a.Role
		}
		parts[i] = p
	}
	v := strings.Join(parts, "|")
	if s.ClientPort != 0 {
		v += ";"
		if s.ClientHost != "" {
			v += joinHost(s.ClientHost) + ":"
		}
		v += strconv.Itoa(s.ClientPort)
	}
	return v
}

// String returns the zoo.cfg line: server.N=value.
func (s Server) String() string { return s.Key() + "=" + s.Value() }

// ParseServer parses a server.N line as ZooKeeper's QuorumServer does:
// key is server.N with N a decimal ID; value is one or more quorum
// addresses host:peerPort:electionPort[:role] separated by '|', optionally
// followed by ';' and a client port, with or without a host. IPv6 hosts are
// written in brackets. Ports must be 1-65535, the peer and election ports
// of an address must differ, a role must be participant or observer (in
// any case), and every address of a server must have the same role.
func ParseServer(key, value string) (Server, error) {
	idText, ok := strings.CutPrefix(key, "server.")
	if !ok {
		return Server{}, fmt.Errorf("%s: not a server.N key", key)
	}
	id, err := ParseID(idText)
	if err != nil {
		return Server{}, fmt.Errorf("%s: %w", key, err)
	}
	line := key + "=" + value
	s := Server{ID: id}
	serverPart, clientPart, hasClient := strings.Cut(value, ";")
	if hasClient {
		if strings.Contains(clientPart, ";") {
			return Server{}, fmt.Errorf("%s: more than one ';' (want host:peerPort:electionPort[:role];[clientHost:]clientPort)", line)
		}
		fields, err := splitHost(clientPart)
		if err != nil {
			return Server{}, fmt.Errorf("%s: client part: %w", line, err)
		}
		switch len(fields) {
		case 1:
		case 2:
			if fields[0] == "" {
				return Server{}, fmt.Errorf("%s: client part %q has an empty host", line, clientPart)
			}
			s.ClientHost = fields[0]
		default:
			return Server{}, fmt.Errorf("%s: client part %q is not [host:]port", line, clientPart)
		}
		if s.ClientPort, err = parsePort(fields[len(fields)-1]); err != nil {
			return Server{}, fmt.Errorf("%s: client port: %w", line, err)
		}
	}
	for _, addr := range strings.Split(serverPart, "|") {
		fields, err := splitHost(addr)
		if err != nil {
			return Server{}, fmt.Errorf("%s: %w", line, err)
		}
		if len(fields) < 3 || len(fields) > 4 {
			return Server{}, fmt.Errorf("%s: address %q is not host:peerPort:electionPort[:role]", line, addr)
		}
		a := Addr{Host: fields[0]}
		if a.Host == "" {
			return Server{}, fmt.Errorf("%s: address %q has an empty host", line, addr)
		}
		if a.PeerPort, err = parsePort(fields[1]); err != nil {
			return Server{}, fmt.Errorf("%s: peer port: %w", line, err)
		}
		if a.ElectionPort, err = parsePort(fields[2]); err != nil {
			return Server{}, fmt.Errorf("%s: election port: %w", line, err)
		}
		if a.PeerPort == a.ElectionPort {
			return Server{}, fmt.Errorf("%s: the peer and election ports must differ", line)
		}
		if len(fields) == 4 {
			a.Role = fields[3]
			if !strings.EqualFold(a.Role, "participant") && !strings.EqualFold(a.Role, "observer") {
				return Server{}, fmt.Errorf("%s: role %q is neither participant nor observer", line, a.Role)
			}
		}
		s.Addrs = append(s.Addrs, a)
	}
	for _, a := range s.Addrs[1:] {
		if (a.Role != "" || s.Addrs[0].Role != "") && !strings.EqualFold(a.Role, s.Addrs[0].Role) {
			return Server{}, fmt.Errorf("%s: the addresses of one server must have the same role", line)
		}
	}
	return s, nil
}

// splitHost splits s on ':' after a leading host, which may be an IPv6
// address in brackets ([::1]:2888:3888), as ZooKeeper's
// ConfigUtils.splitWithLeadingHostname does; the brackets are dropped.
func splitHost(s string) ([]string, error) {
	if !strings.HasPrefix(s, "[") {
		return strings.Split(s, ":"), nil
	}
	host, rest, ok := strings.Cut(s[1:], "]")
	if !ok {
		return nil, fmt.Errorf("%q: '[' without ']'", s)
	}
	if rest == "" {
		return []string{host}, nil
	}
	if !strings.HasPrefix(rest, ":") {
		return nil, fmt.Errorf("%q: ']' not followed by ':'", s)
	}
	return append([]string{host}, strings.Split(rest[1:], ":")...), nil
}

// joinHost brackets an IPv6 address.
func joinHost(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

func parsePort(s string) (int, error) {
	if !digits.MatchString(s) {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%q is not a port number (1-65535)", s)
	}
	return p, nil
}
