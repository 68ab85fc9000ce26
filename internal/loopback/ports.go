package loopback

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// ephemeralRange is where Linux keeps the local ports it gives outgoing
// connections.
const ephemeralRange = "/proc/sys/net/ipv4/ip_local_port_range"

// lowestPort is the least port FreePorts picks: below it are the ports
// services commonly own.
const lowestPort = 10000

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1. All n
// listeners are held until the last is picked, so the ports differ.
//
// The ports come from below the kernel's ephemeral range (from 10000 up to
// its start), where no outgoing connection is given a local port: a port
// picked there stays free until its server binds it, which may be seconds
// later (a JVM's start), whereas a port from the ephemeral range can be
// taken in between by any connection the host makes, and the server then
// fails with "Address already in use". When the range starts too low to
// leave room, the ports come from it, as the kernel picks them.
func FreePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	high, below := ephemeralStart()
	for len(ports) < n {
		ln, err := listenFree(high, below)
		if err != nil {
			return nil, fmt.Errorf("loopback: picking a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// listenFree listens on a free port of 127.0.0.1: with below, a random one
// from lowestPort up to high (one in use, or held by the caller, is tried
// again with another, up to a bound); else one the kernel picks.
func listenFree(high int, below bool) (net.Listener, error) {
	if !below {
		return net.Listen("tcp", "127.0.0.1:0")
	}
	var err error
	for range 1000 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(lowestPort+rand.IntN(high-lowestPort))); err == nil {
			return ln, nil
		}
	}
	return nil, err
}

// ephemeralStart returns the first port of the kernel's ephemeral range,
// and whether there is room below it (at least 1000 ports from
// lowestPort). Without the file (not Linux), there is none.
func ephemeralStart() (int, bool) {
	b, err := os.ReadFile(ephemeralRange)
	if err != nil {
		return 0, false
	}
	low, err := parseRangeStart(string(b))
	if err != nil || low < lowestPort+1000 {
		return 0, false
	}
	return low, true
}

// parseRangeStart reads the first number of ip_local_port_range's "LOW\tHIGH".
func parseRangeStart(s string) (int, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, errors.New("empty port range")
	}
	return strconv.Atoi(f[0])
}
