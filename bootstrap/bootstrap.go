package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/brokers"
)

// SeedTimeout bounds one seed's metadata answer in Discover.
const SeedTimeout = 5 * time.Second

// ErrNoPorts is Seeds' error when the broker pods run but declare no TCP
// port: waiting will not help, the pod spec must name its listeners.
var ErrNoPorts = errors.New("bootstrap: the broker pods declare no TCP container port to try")

// Broker is one broker as the metadata answer advertises it.
type Broker struct {
	ID   int32
	Host string
	Port int32
}

// Addr is the broker's host:port.
func (b Broker) Addr() string { return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) }

// Seeds returns ip:port for every TCP port that the containers of snap's
// broker pods declare, brokers first by ID, each pod's ports in their
// declared order. Pods without an IP yet are left out; when every broker
// pod has one and none declares a port, the error wraps ErrNoPorts.
func Seeds(ctx context.Context, cs kubernetes.Interface, namespace string, snap []brokers.Server) ([]string, error) {
	var seeds []string
	withIP, all := 0, 0
	for _, b := range snap {
		if !b.Broker {
			continue
		}
		all++
		if b.PodIP == "" {
			continue
		}
		withIP++
		pod, err := cs.CoreV1().Pods(namespace).Get(ctx, b.Pod, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("bootstrap: seeds: %w", err)
		}
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
					seeds = append(seeds, net.JoinHostPort(b.PodIP, strconv.Itoa(int(p.ContainerPort))))
				}
			}
		}
	}
	switch {
	case len(seeds) > 0:
	case withIP > 0 && withIP == all:
		return nil, fmt.Errorf("%w (namespace %s)", ErrNoPorts, namespace)
	default:
		return nil, fmt.Errorf("bootstrap: no broker pod in %s has an IP yet", namespace)
	}
	return seeds, nil
}

// SeedError is one seed that did not answer with metadata.
type SeedError struct {
	Seed string
	Err  error
}

// DiscoverError lists every seed Discover tried.
type DiscoverError []SeedError

func (e DiscoverError) Error() string {
	parts := make([]string, len(e))
	for i, s := range e {
		parts[i] = s.Seed + ": " + s.Err.Error()
	}
	return "bootstrap: no seed answered with metadata: " + strings.Join(parts, "; ")
}

// Discover asks each seed alone for metadata, in turn, and returns the
// first answer's brokers (sorted by ID) and the seed that gave it. A
// controller's listener, or a port that is not Kafka's, fails and the next
// seed is tried; opts (a dialer, security) apply to every attempt. When no
// seed answers, the error is a DiscoverError.
func Discover(ctx context.Context, seeds []string, opts ...kgo.Opt) (string, []Broker, error) {
	var failed DiscoverError
	for _, seed := range seeds {
		bs, err := ask(ctx, seed, opts)
		if err == nil {
			return seed, bs, nil
		}
		if ctx.Err() != nil {
			return "", nil, fmt.Errorf("bootstrap: %w", ctx.Err())
		}
		failed = append(failed, SeedError{seed, err})
	}
	return "", nil, failed
}

func ask(ctx context.Context, seed string, opts []kgo.Opt) ([]Broker, error) {
	cl, err := kgo.NewClient(append(slices.Clone(opts), kgo.SeedBrokers(seed), kgo.RequestRetries(0), kgo.RetryTimeout(SeedTimeout))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, SeedTimeout)
	defer cancel()
	resp, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest()) // no topics: brokers only
	if err != nil {
		return nil, err
	}
	m := resp.(*kmsg.MetadataResponse)
	if len(m.Brokers) == 0 {
		return nil, errors.New("metadata names no broker")
	}
	bs := make([]Broker, len(m.Brokers))
	for i, b := range m.Brokers {
		bs[i] = Broker{ID: b.NodeID, Host: b.Host, Port: b.Port}
	}
	slices.SortFunc(bs, func(a, b Broker) int { return int(a.ID - b.ID) })
	return bs, nil
}

// Addrs lists the brokers' advertised host:port.
func Addrs(bs []Broker) []string {
	addrs := make([]string, len(bs))
	for i, b := range bs {
		addrs[i] = b.Addr()
	}
	return addrs
}
