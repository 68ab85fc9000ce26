package kafkaadmin

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxListed caps the partitions that Problems names one by one per kind.
const maxListed = 10

// Healthy reports whether Problems is empty.
func (h Health) Healthy() bool { return len(h.Problems()) == 0 }

// Problems names, one line each, everything that keeps h from being healthy:
// unreachable metadata, a wrong cluster ID, missing brokers, brokers that do
// not answer requests sent to them alone, partitions with
// no leader, with an error or with an ISR smaller than their replica set,
// and a quorum with no leader, other voters than expected, or voters that
// are not caught up (in ZooKeeper mode instead: no registered controller
// broker). At most 10 partitions of each kind are named one by one.
func (h Health) Problems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if h.MetadataErr != nil {
		add("metadata: %v", h.MetadataErr)
	} else {
		if h.Expected.ClusterID != "" && h.ClusterID != h.Expected.ClusterID {
			add("cluster ID is %q, want %q", h.ClusterID, h.Expected.ClusterID)
		}
		if missing := subtract(h.Expected.Brokers, h.Brokers); len(missing) > 0 {
			add("brokers %v not registered (registered: %v)", missing, h.Brokers)
		} else if len(h.Brokers) == 0 {
			add("no broker registered")
		}
		for _, b := range h.Unanswered {
			add("broker %d: %v", b.ID, b.Err)
		}
		listPartitions(add, "offline", h.Offline, func(p PartitionState) string {
			return fmt.Sprintf("no leader; replicas %v, ISR %v, offline replicas %v", p.Replicas, p.ISR, p.OfflineReplicas)
		})
		listPartitions(add, "errored", h.Errored, func(p PartitionState) string { return p.Err.Error() })
		listPartitions(add, "under-replicated", h.NotFullISR, func(p PartitionState) string {
			return fmt.Sprintf("ISR %v of replicas %v, missing %v", p.ISR, p.Replicas, subtract(p.Replicas, p.ISR))
		})
	}

	if h.Expected.ZooKeeperMode {
		if h.MetadataErr == nil && !slices.Contains(h.Brokers, h.Controller) {
			add("no controller broker (metadata names %d; registered: %v)", h.Controller, h.Brokers)
		}
		return out
	}
	q := h.Quorum
	switch {
	case q.Err != nil:
		add("quorum: %v", q.Err)
	case q.LeaderID < 0:
		add("quorum: no leader (epoch %d)", q.LeaderEpoch)
	default:
		if ids := q.VoterIDs(); len(h.Expected.Voters) > 0 && !slices.Equal(ids, h.Expected.Voters) {
			add("quorum: voters are %v, want %v", ids, h.Expected.Voters)
		}
		for _, v := range q.Voters {
			if v.ID == q.LeaderID {
				continue
			}
			switch byRecords, byTime := v.lagging(h.Expected.MaxQuorumLag, h.Expected.MaxQuorumLagTime); {
			case byRecords:
				add("quorum: voter %d is %d records behind leader %d (max %d)", v.ID, v.Lag, q.LeaderID, h.Expected.MaxQuorumLag)
			case byTime:
				add("quorum: voter %d was last caught up with leader %d %v before it (max %v)", v.ID, q.LeaderID, lagTime(v.LagTime), h.Expected.MaxQuorumLagTime)
			}
		}
	}
	return out
}

// String summarizes h on one line: healthy, or its problems.
func (h Health) String() string {
	if p := h.Problems(); len(p) > 0 {
		return fmt.Sprintf("unhealthy (%d problems): %s", len(p), strings.Join(p, "; "))
	}
	if h.Expected.ZooKeeperMode {
		return fmt.Sprintf("healthy: cluster %s, brokers %v, %d partitions with full ISRs, controller broker %d (ZooKeeper mode)",
			h.ClusterID, h.Brokers, h.Partitions, h.Controller)
	}
	return fmt.Sprintf("healthy: cluster %s, brokers %v, %d partitions with full ISRs, quorum leader %d (epoch %d), voters %v caught up",
		h.ClusterID, h.Brokers, h.Partitions, h.Quorum.LeaderID, h.Quorum.LeaderEpoch, h.Quorum.VoterIDs())
}

func listPartitions(add func(string, ...any), kind string, list []PartitionState, detail func(PartitionState) string) {
	for i, p := range list {
		if i == maxListed {
			add("... and %d more %s partitions", len(list)-maxListed, kind)
			return
		}
		if p.Partition < 0 {
			add("%s: topic %q: %s", kind, p.Topic, detail(p))
			continue
		}
		add("%s: %s-%d: %s", kind, p.Topic, p.Partition, detail(p))
	}
}

func lagTime(d time.Duration) string {
	if d < 0 {
		return "an unknown time"
	}
	return d.String()
}

func message(s *string) string {
	if s == nil || *s == "" {
		return ""
	}
	return ": " + *s
}

// subtract returns the IDs of want that are not in have, in want's order.
func subtract(want, have []int32) []int32 {
	var out []int32
	for _, id := range want {
		if !slices.Contains(have, id) {
			out = append(out, id)
		}
	}
	return out
}

// intersect returns the IDs of a that are also in b, in a's order.
func intersect(a, b []int32) []int32 {
	var out []int32
	for _, id := range a {
		if slices.Contains(b, id) {
			out = append(out, id)
		}
	}
	return out
}

func sortedCopy(ids []int32) []int32 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}
