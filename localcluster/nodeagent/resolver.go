package nodeagent

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
)

// HostsPath is where the agent writes the cluster's name table, relative to
// the state dir.
const HostsPath = "hosts"

// Resolver answers names from the cluster's hosts file, so processes on the
// host (the suite's Kafka clients) reach pods by their cluster DNS names
// without any change to the host's /etc/hosts.
type Resolver struct{ Path string }

// Lookup returns the IP of name, reading the file on every call so a pod
// that came back with a new IP is found at once.
func (r Resolver) Lookup(name string) (string, error) {
	f, err := os.Open(r.Path)
	if err != nil {
		return "", fmt.Errorf("agent: resolver: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, n := range fields[1:] {
			if strings.EqualFold(n, strings.TrimSuffix(name, ".")) {
				return fields[0], nil
			}
		}
	}
	return "", fmt.Errorf("agent: resolver: %s: no such host in %s", name, r.Path)
}

// DialContext dials addr, resolving its host from the hosts file when it is
// a cluster name; other hosts are dialed as usual.
func (r Resolver) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if net.ParseIP(host) == nil && host != "localhost" {
		ip, err := r.Lookup(host)
		if err != nil {
			return nil, err
		}
		addr = net.JoinHostPort(ip, port)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
