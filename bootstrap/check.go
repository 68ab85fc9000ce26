package bootstrap

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/brokers"
)

// DialTimeout bounds Check's connect to one advertised listener.
const DialTimeout = 2 * time.Second

// Problem is one address that cannot work, found without waiting for the
// cluster to become healthy.
type Problem struct {
	Subject string // "broker 1 (pod kafka-1)"
	Want    string
	Got     string
}

func (p Problem) String() string { return p.Subject + ": want " + p.Want + ", got " + p.Got }

// Checker resolves and dials as the suite's clients will.
type Checker struct {
	// Lookup resolves a host name to an IP (the local cluster's hosts
	// file, or the host's resolver). IP literals never reach it.
	Lookup func(host string) (string, error)
	// Dial connects to ip:port; default net.Dialer with DialTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ServiceCIDR, when set, names the cluster IPs: an advertised host
	// that resolves to one is a Service's, not the broker's own.
	ServiceCIDR *net.IPNet
}

func (c Checker) resolve(host string) (string, error) {
	if net.ParseIP(host) != nil {
		return host, nil
	}
	return c.Lookup(host)
}

func (c Checker) dial(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	dial := c.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// Advertised checks each advertised broker against snap: a pod carries its
// ID, its host resolves to that pod's IP, and something accepts a
// connection there. A broker of snap that is not advertised yet, or whose
// pod has no IP yet, is no problem here (it may still be starting; the
// health wait sees it).
func (c Checker) Advertised(ctx context.Context, adv []Broker, snap []brokers.Server) []Problem {
	pods := map[int32]brokers.Server{}
	for _, b := range snap {
		pods[b.ID] = b
	}
	var ps []Problem
	for _, a := range adv {
		pod, ok := pods[a.ID]
		if !ok {
			ps = append(ps, Problem{fmt.Sprintf("node %d (advertises %s)", a.ID, a.Addr()), "a broker pod carrying this node ID",
				"none: the node IDs are not derived from the pods"})
			continue
		}
		if pod.PodIP == "" {
			continue
		}
		ip, err := c.resolve(a.Host)
		switch {
		case err != nil:
			ps = append(ps, Problem{pod.Subject(), "an advertised host the clients can resolve", fmt.Sprintf("%s: %v", a.Addr(), err)})
		case c.ServiceCIDR != nil && c.ServiceCIDR.Contains(net.ParseIP(ip)):
			ps = append(ps, Problem{pod.Subject(), "an advertised host that resolves to its own pod's IP " + pod.PodIP,
				fmt.Sprintf("%s, a Service's cluster IP %s: clients would reach the broker through a proxy, and a fault that cuts the pod's traffic would not cut theirs", a.Addr(), ip)})
		case ip != pod.PodIP:
			ps = append(ps, Problem{pod.Subject(), "an advertised host that resolves to its own pod's IP " + pod.PodIP,
				fmt.Sprintf("%s, which resolves to %s%s", a.Addr(), ip, owner(ip, snap))})
		default:
			if err := c.dial(ctx, net.JoinHostPort(ip, strconv.Itoa(int(a.Port)))); err != nil {
				ps = append(ps, Problem{pod.Subject(), "a listener that accepts connections at its advertised " + a.Addr(), err.Error()})
			}
		}
	}
	return ps
}

// owner names the pod of snap with ip, if any.
func owner(ip string, snap []brokers.Server) string {
	for _, b := range snap {
		if b.PodIP == ip {
			return " (pod " + b.Pod + ")"
		}
	}
	return ""
}

// Voters checks controller.quorum.voters (id@host:port,...): each voter's
// host resolves to the IP of the pod that runs the controller with that ID.
// An empty value (a dynamic quorum) is no problem.
func (c Checker) Voters(voters string, snap []brokers.Server) []Problem {
	if strings.TrimSpace(voters) == "" {
		return nil
	}
	pods := map[int32]brokers.Server{}
	for _, b := range snap {
		pods[b.ID] = b
	}
	var ps []Problem
	for _, v := range strings.Split(voters, ",") {
		v = strings.TrimSpace(v)
		subj := "quorum voter " + v
		idText, addr, ok := strings.Cut(v, "@")
		id, err := strconv.ParseInt(idText, 10, 32)
		host, _, splitErr := net.SplitHostPort(addr)
		if !ok || err != nil || splitErr != nil {
			ps = append(ps, Problem{subj, "id@host:port", "a malformed entry of controller.quorum.voters"})
			continue
		}
		pod, found := pods[int32(id)]
		if !found || !pod.Controller {
			ps = append(ps, Problem{subj, fmt.Sprintf("a pod that runs controller %d", id), "none"})
			continue
		}
		if pod.PodIP == "" {
			continue // not scheduled or started yet
		}
		ip, err := c.resolve(host)
		switch {
		case err != nil:
			ps = append(ps, Problem{subj, "a host that resolves", err.Error()})
		case ip != pod.PodIP:
			ps = append(ps, Problem{subj, fmt.Sprintf("the IP %s of controller %d's pod %s", pod.PodIP, id, pod.Pod), ip + owner(ip, snap)})
		}
	}
	return ps
}
