package scenario

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
)

// The unavailability bound by kind of fault, and where it came from. A
// hard fault whose brokers cannot be asked falls back to Kafka's default
// session timeout and says so.
func TestUnavailabilityBound(t *testing.T) {
	set := BoundsConfig{MaxUnavailable: metav1.Duration{Duration: 42 * time.Second}}
	snap := []brokers.Server{{ID: 0, Broker: true}}
	combined := []brokers.Server{{ID: 0, Broker: true, Controller: true}}
	type story = Story[any]
	tests := []struct {
		name   string
		bounds BoundsConfig
		zk     string
		st     story
		snap   []brokers.Server // default snap
		want   time.Duration
		why    string
	}{
		{"the config wins", set, "", story{Kind: Hard}, nil, 42 * time.Second, "in the config"},
		{"unbounded wins over the config", set, "", story{Kind: Hard, Unbounded: "most brokers down"}, nil, 0, "not bounded: most brokers down"},
		{"the story's own", BoundsConfig{}, "", story{Kind: Hard, MaxUnavailable: 7 * time.Second, MaxUnavailableWhy: "its own"}, nil, 7 * time.Second, "its own"},
		{"graceful", BoundsConfig{}, "", story{Kind: Graceful}, nil, GracefulMaxUnavailable, "graceful"},
		{"hard, brokers unreachable", BoundsConfig{}, "", story{Kind: Hard}, nil, kafkaDefaultSessionTimeout + HardMargin, "Kafka's default broker.session.timeout.ms"},
		{"hard, a combined node: plus a controller failover", BoundsConfig{}, "", story{Kind: Hard}, combined, kafkaDefaultSessionTimeout + HardMargin + kafkaDefaultQuorumFetchTimeout + kafkaDefaultQuorumElectionTimeout,
			"a controller failover (node 0, a victim, is a controller as well as a broker, and may be the active one (it could not be read: "},
		{"hard in ZooKeeper mode: plus a tick, no failover", BoundsConfig{}, "zk:2181", story{Kind: Hard}, combined, kafkaDefaultZooKeeperSessionTimeout + HardMargin + zooKeeperTick,
			"a hard fault in ZooKeeper mode: Kafka's default zookeeper.session.timeout.ms"},
		{"neither", BoundsConfig{}, "", story{}, nil, DefaultMaxUnavailable, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &Env{Bounds: tt.bounds, ZooKeeperConnect: tt.zk, Bootstrap: []string{refusingAddr(t)},
				KafkaOpts: []kgo.Opt{kgo.RequestRetries(0), kgo.DialTimeout(200 * time.Millisecond)}}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			sn := tt.snap
			if sn == nil {
				sn = snap
			}
			got, why := unavailabilityBound(ctx, env, tt.st, sn, sn)
			if got != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("%s (%s), want %s (%q)", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestFailoverVictim(t *testing.T) {
	combined := func(id int32) brokers.Server { return brokers.Server{ID: id, Broker: true, Controller: true} }
	brokerOnly := brokers.Server{ID: 3, Broker: true}
	controllerOnly := brokers.Server{ID: 4, Controller: true}
	unread := errors.New("no leader")
	tests := []struct {
		name    string
		victims []brokers.Server
		active  int32
		err     error
		want    int32 // -1: no failover
	}{
		{"the victim is the active controller", []brokers.Server{combined(1)}, 1, nil, 1},
		{"a combined victim, another node is active", []brokers.Server{combined(1)}, 2, nil, -1},
		{"a broker-only victim", []brokers.Server{brokerOnly}, 3, nil, -1},
		{"a controller-only victim leads no partition", []brokers.Server{controllerOnly}, 4, nil, -1},
		{"the active controller unread: a combined victim may be it", []brokers.Server{combined(1)}, -1, unread, 1},
		{"the active controller unread, no combined victim", []brokers.Server{brokerOnly}, -1, unread, -1},
		{"every pod of a roll, the second is active", []brokers.Server{combined(0), combined(1), combined(2)}, 1, nil, 1},
	}
	for _, tt := range tests {
		id, why, ok := failoverVictim(tt.victims, tt.active, tt.err)
		if !ok {
			id = -1
		}
		if id != tt.want || ok != (why != "") {
			t.Errorf("%s: %d %q %t, want %d", tt.name, id, why, ok, tt.want)
		}
	}
}

// refusingAddr is an address on which nothing listens.
func refusingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
