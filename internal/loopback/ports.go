package loopback

import (
	"fmt"
	"net"
)

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1. All n
// listeners are held until the last is picked, so the ports differ.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("loopback: picking a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
