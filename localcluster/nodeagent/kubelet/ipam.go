package kubelet

import (
	"fmt"
	"net"
	"sync"
)

// ipam hands out pod IPs from 127.1.0.0/16, one allocator for the whole
// cluster (all nodes live in one agent process). Any 127.x.y.z can be bound
// without set-up, so nothing is added to or removed from the host.
type ipam struct {
	mu    sync.Mutex
	inUse map[string]string // ip -> pod UID
	next  int
}

const ipamSize = 65534

func newIPAM() *ipam { return &ipam{inUse: map[string]string{}} }

// allocate returns a free IP for pod uid, the same one if it has one.
func (a *ipam) allocate(uid string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip, owner := range a.inUse {
		if owner == uid {
			return ip, nil
		}
	}
	for range ipamSize {
		a.next = a.next%ipamSize + 1
		ip := net.IPv4(127, 1, byte(a.next>>8), byte(a.next)).String()
		if _, taken := a.inUse[ip]; !taken && a.next&0xff != 0 && a.next&0xff != 0xff {
			a.inUse[ip] = uid
			return ip, nil
		}
	}
	return "", fmt.Errorf("agent: no free pod IP in 127.1.0.0/16")
}

// release frees uid's IP.
func (a *ipam) release(uid string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip, owner := range a.inUse {
		if owner == uid {
			delete(a.inUse, ip)
		}
	}
}
