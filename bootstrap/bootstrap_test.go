package bootstrap

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafkachaos/kafkachaos/brokers"
)

func TestDiscoverSkipsSeedsThatAreNotKafka(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A port nobody listens on, and one that accepts and says nothing
	// Kafka understands, come first.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	seeds := append([]string{deadAddr, silent.Addr().String()}, c.ListenAddrs()[1])
	seed, bs, err := Discover(t.Context(), seeds)
	if err != nil {
		t.Fatal(err)
	}
	if seed != c.ListenAddrs()[1] {
		t.Errorf("answered by %s, want %s", seed, c.ListenAddrs()[1])
	}
	if got, want := strings.Join(Addrs(bs), ","), strings.Join(c.ListenAddrs(), ","); got != want {
		t.Errorf("advertised %s, want %s", got, want)
	}

	_, _, err = Discover(t.Context(), []string{deadAddr})
	var de DiscoverError
	if !errors.As(err, &de) || len(de) != 1 || de[0].Seed != deadAddr {
		t.Errorf("no seed answers: got %v, want a DiscoverError naming %s", err, deadAddr)
	}
}

func TestSeedsAreThePodsDeclaredTCPPorts(t *testing.T) {
	pod := func(name string, ports ...corev1.ContainerPort) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kafka", Ports: ports}}}}
	}
	cs := fake.NewClientset(
		pod("events-kafka-0", corev1.ContainerPort{ContainerPort: 9094}, corev1.ContainerPort{ContainerPort: 9095, Protocol: corev1.ProtocolTCP},
			corev1.ContainerPort{ContainerPort: 53, Protocol: corev1.ProtocolUDP}),
		pod("events-kafka-1", corev1.ContainerPort{ContainerPort: 9094}),
		pod("controller-0", corev1.ContainerPort{ContainerPort: 9093}),
	)
	snap := []brokers.Server{
		{ID: 0, Pod: "events-kafka-0", PodIP: "127.10.0.1", Broker: true},
		{ID: 1, Pod: "events-kafka-1", PodIP: "127.10.0.2", Broker: true},
		{ID: 2, Pod: "events-kafka-2", Broker: true}, // no IP yet
		{ID: 100, Pod: "controller-0", PodIP: "127.10.0.9", Controller: true},
	}
	got, err := Seeds(t.Context(), cs, "ns", snap)
	if err != nil {
		t.Fatal(err)
	}
	if want := "127.10.0.1:9094,127.10.0.1:9095,127.10.0.2:9094"; strings.Join(got, ",") != want {
		t.Errorf("seeds %v, want %s", got, want)
	}
	if _, err := Seeds(t.Context(), cs, "ns", snap[3:]); err == nil || errors.Is(err, ErrNoPorts) {
		t.Errorf("controllers only: want an error to wait on, got %v", err)
	}
	noPorts := fake.NewClientset(pod("events-kafka-0"))
	if _, err := Seeds(t.Context(), noPorts, "ns", snap[:1]); !errors.Is(err, ErrNoPorts) {
		t.Errorf("a running broker pod without ports: got %v, want ErrNoPorts", err)
	}
}

func TestCheck(t *testing.T) {
	snap := []brokers.Server{
		{ID: 0, Pod: "kafka-0", PodIP: "127.10.0.1", Broker: true, Controller: true},
		{ID: 1, Pod: "kafka-1", PodIP: "127.10.0.2", Broker: true, Controller: true},
		{ID: 2, Pod: "kafka-2", PodIP: "127.10.0.3", Broker: true},
		{ID: 3, Pod: "kafka-3", Broker: true, Controller: true}, // not started yet
	}
	names := map[string]string{"kafka-0.h": "127.10.0.1", "kafka-1.h": "127.10.0.2", "kafka-2.h": "127.10.0.3", "localhost": "127.0.0.1",
		"kafka-2-external.svc": "127.96.0.12"}
	listening := map[string]bool{"127.10.0.1:9092": true, "127.10.0.2:9092": true, "127.10.0.3:9092": true}
	_, cidr, _ := net.ParseCIDR("127.96.0.0/16")
	c := Checker{
		ServiceCIDR: cidr,
		Lookup: func(host string) (string, error) {
			if ip, ok := names[host]; ok {
				return ip, nil
			}
			return "", errors.New("no such host")
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			if !listening[addr] {
				return nil, errors.New("connection refused")
			}
			a, b := net.Pipe()
			b.Close()
			return a, nil
		},
	}
	good := []Broker{{0, "kafka-0.h", 9092}, {1, "kafka-1.h", 9092}, {2, "127.10.0.3", 9092}}
	tests := []struct {
		name   string
		adv    []Broker
		voters string
		want   []string // one substring per problem, in order
	}{
		{name: "good", adv: good, voters: "0@kafka-0.h:9093,1@kafka-1.h:9093"},
		{name: "a broker still starting is not a problem here", adv: good[:2]},
		{name: "localhost", adv: []Broker{{0, "localhost", 9092}}, want: []string{"broker 0 (pod kafka-0): want an advertised host that resolves to its own pod's IP 127.10.0.1, got localhost:9092, which resolves to 127.0.0.1"}},
		{name: "another pod's name", adv: []Broker{{1, "kafka-2.h", 9092}}, want: []string{"resolves to 127.10.0.3 (pod kafka-2)"}},
		{name: "a name nobody resolves", adv: []Broker{{2, "kafka-2.elsewhere", 9092}}, want: []string{"resolve, got kafka-2.elsewhere:9092: no such host"}},
		{name: "nothing listens on the advertised port", adv: []Broker{{2, "kafka-2.h", 9094}}, want: []string{"accepts connections at its advertised kafka-2.h:9094, got connection refused"}},
		{name: "an ID no pod carries", adv: []Broker{{7, "kafka-0.h", 9092}}, want: []string{"node 7 (advertises kafka-0.h:9092): want a broker pod carrying this node ID"}},
		{name: "a voter that is not a controller", voters: "2@kafka-2.h:9093", want: []string{"quorum voter 2@kafka-2.h:9093: want a pod that runs controller 2"}},
		{name: "a voter naming another pod", voters: "0@kafka-1.h:9093", want: []string{"want the IP 127.10.0.1 of controller 0's pod kafka-0, got 127.10.0.2 (pod kafka-1)"}},
		{name: "a pod without an IP yet is no problem", adv: []Broker{{3, "kafka-3.h", 9092}}, voters: "3@kafka-3.h:9093"},
		{name: "a Service's cluster IP", adv: []Broker{{2, "kafka-2-external.svc", 9092}}, want: []string{"a Service's cluster IP 127.96.0.12"}},
		{name: "a malformed voter", voters: "kafka-0.h:9093", want: []string{"want id@host:port"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := append(c.Advertised(t.Context(), tt.adv, snap), c.Voters(tt.voters, snap)...)
			if len(ps) != len(tt.want) {
				t.Fatalf("problems %v, want %d", ps, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(ps[i].String(), w) {
					t.Errorf("problem %d %q lacks %q", i, ps[i], w)
				}
			}
		})
	}
}
