package scenario

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// zooKeeperTick is the official zookeeper image's tickTime (ZOO_TICK_TIME),
// which the zookeeper layout keeps.
const zooKeeperTick = 2 * time.Second

// Kafka's defaults of the settings a bound is made of:
// broker.session.timeout.ms (KRaft), zookeeper.session.timeout.ms
// (ZooKeeper mode), controller.quorum.fetch.timeout.ms and
// controller.quorum.election.timeout.ms.
const (
	kafkaDefaultSessionTimeout          = 9 * time.Second
	kafkaDefaultZooKeeperSessionTimeout = 18 * time.Second
	kafkaDefaultQuorumFetchTimeout      = 2 * time.Second
	kafkaDefaultQuorumElectionTimeout   = time.Second
)

// unavailabilityBound is the longest time without an ack the story
// allows (0: none), and where that limit comes from: none for a story
// that says why it is unbounded; the config's bounds.maxUnavailable when
// set; the story's own; else by the kind of fault.
func unavailabilityBound[E any](ctx context.Context, env *Env, st Story[E], snap, victims []brokers.Server) (time.Duration, string) {
	switch {
	case st.Unbounded != "":
		return 0, "not bounded: " + st.Unbounded
	case env.Bounds.MaxUnavailable.Duration > 0:
		return env.Bounds.MaxUnavailable.Duration, "bounds.maxUnavailable in the config"
	case st.MaxUnavailable > 0:
		return st.MaxUnavailable, st.MaxUnavailableWhy
	case st.Kind == Graceful:
		return GracefulMaxUnavailable, "a graceful operation"
	case st.Kind != Hard:
		return DefaultMaxUnavailable, "the default for a fault of no known timing"
	}
	return hardBound(ctx, env, snap, victims)
}

// hardBound bounds a hard fault. The active controller's session timeout
// is the one in force; a broker's is read (controllers are not always
// reachable by the story's clients), which the manifests keep equal. In
// ZooKeeper mode the controller learns of a dead broker when its
// ZooKeeper session expires.
func hardBound(ctx context.Context, env *Env, snap, victims []brokers.Server) (time.Duration, string) {
	key, session := "broker.session.timeout.ms", kafkaDefaultSessionTimeout
	if env.ZooKeeperConnect != "" {
		key, session = "zookeeper.session.timeout.ms", kafkaDefaultZooKeeperSessionTimeout
	}
	from := "Kafka's default " + key + " (the brokers' could not be read)"
	if ids := BrokerIDs(snap); len(ids) > 0 {
		if d, ok := BrokerConfigDuration(ctx, env, ids[0], key); ok {
			session, from = d, fmt.Sprintf("%s %d of broker %d", key, d.Milliseconds(), ids[0])
		}
	}
	if env.ZooKeeperConnect != "" {
		// ZooKeeper expires sessions in tickTime buckets, so an expiry
		// comes up to a tick late (measured here: 16.2-20.9 s for an
		// 18 s session).
		return session + HardMargin + zooKeeperTick, fmt.Sprintf("a hard fault in ZooKeeper mode: %s + %s + ZooKeeper's tickTime %s (sessions expire by the tick)", from, HardMargin, zooKeeperTick)
	}
	if failover, why := controllerFailover(ctx, env, victims); failover > 0 {
		return session + HardMargin + failover, fmt.Sprintf("a hard fault: %s + %s + %s", from, HardMargin, why)
	}
	return session + HardMargin, fmt.Sprintf("a hard fault: %s + %s", from, HardMargin)
}

// BrokerConfigDuration reads a broker's config key, a count of
// milliseconds; false when it cannot be read or is not positive.
func BrokerConfigDuration(ctx context.Context, env *Env, id int32, key string) (d time.Duration, ok bool) {
	_ = env.WithKafka(func(cl *kafkaadmin.Client) error {
		v, err := cl.BrokerConfig(ctx, id, key)
		if ms, perr := strconv.Atoi(v); err == nil && perr == nil && ms > 0 {
			d, ok = time.Duration(ms)*time.Millisecond, true
		}
		return nil
	})
	return d, ok
}

// controllerFailover is what a hard fault's bound adds when a victim is
// the active KRaft controller as well as a broker (a combined node): the
// time for the other voters to notice (controller.quorum.fetch.timeout.ms)
// and elect (up to controller.quorum.election.timeout.ms), after which the
// new controller gives the dead broker a whole session again (Kafka's
// ClusterControlManager.activate touches each one). Measured (2026-12-06,
// combined layout): leaderships moved 11.5 and 12.0 s after such a kill,
// 8.4 s after a broker-only one. It is 0 in ZooKeeper mode, and when no
// victim is both broker and the active controller; when the active
// controller cannot be read, a combined victim is taken to be it.
func controllerFailover(ctx context.Context, env *Env, victims []brokers.Server) (time.Duration, string) {
	if env.ZooKeeperConnect != "" {
		return 0, ""
	}
	active, _, err := env.Controller(ctx)
	id, who, ok := failoverVictim(victims, active, err)
	if !ok {
		return 0, ""
	}
	read := func(key string, def time.Duration) (time.Duration, string) {
		if d, ok := BrokerConfigDuration(ctx, env, id, key); ok {
			return d, fmt.Sprintf("%s %d of node %d", key, d.Milliseconds(), id)
		}
		return def, "Kafka's default " + key
	}
	fetch, fwhy := read("controller.quorum.fetch.timeout.ms", kafkaDefaultQuorumFetchTimeout)
	elect, ewhy := read("controller.quorum.election.timeout.ms", kafkaDefaultQuorumElectionTimeout)
	return fetch + elect, fmt.Sprintf("a controller failover (%s): %s + %s, after which the new controller starts every broker's session anew", who, fwhy, ewhy)
}

// failoverVictim returns the victim whose loss fails the KRaft controller
// over as well as fencing a broker: a combined node that is the active
// controller (active, as read, or, when reading it failed with err, any
// combined node), and why; false when there is none.
func failoverVictim(victims []brokers.Server, active int32, err error) (int32, string, bool) {
	var combined []brokers.Server
	for _, v := range victims {
		if v.Controller && v.Broker {
			combined = append(combined, v)
		}
	}
	i := slices.IndexFunc(combined, func(b brokers.Server) bool { return b.ID == active })
	switch {
	case len(combined) == 0, err == nil && i < 0:
		return 0, "", false
	case err != nil:
		return combined[0].ID, fmt.Sprintf("node %d, a victim, is a controller as well as a broker, and may be the active one (it could not be read: %v)", combined[0].ID, err), true
	}
	return active, fmt.Sprintf("node %d, a victim, is the active controller as well as a broker", active), true
}
