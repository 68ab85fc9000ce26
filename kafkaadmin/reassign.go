package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Assignments are partitions' replicas, by topic and partition. A
// partition's first replica is its preferred leader.
type Assignments map[string]map[int32][]int32

// Assignments returns the replicas of every partition of topics, from
// fresh metadata.
func (c *Client) Assignments(ctx context.Context, topics ...string) (Assignments, error) {
	if len(topics) == 0 {
		return nil, errors.New("kafkaadmin: assignments: no topic given")
	}
	m, err := c.metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: assignments: %w", err)
	}
	a := Assignments{}
	for _, t := range topics {
		td, err := topicIn(m, t)
		if err != nil {
			return nil, fmt.Errorf("kafkaadmin: assignments: %w", err)
		}
		a[t] = map[int32][]int32{}
		for p, pd := range td.Partitions {
			a[t][p] = slices.Clone(pd.Replicas)
		}
	}
	return a, nil
}

// Each calls fn for every partition, in topic and partition order.
func (a Assignments) Each(fn func(topic string, p int32, replicas []int32)) {
	for _, t := range slices.Sorted(maps.Keys(a)) {
		for _, p := range slices.Sorted(maps.Keys(a[t])) {
			fn(t, p, a[t][p])
		}
	}
}

// Changed returns the partitions of to whose replicas differ from a's
// (order counts: it is the preferred leader).
func (a Assignments) Changed(to Assignments) Assignments {
	out := Assignments{}
	to.Each(func(t string, p int32, rs []int32) {
		if !slices.Equal(a[t][p], rs) {
			out.set(t, p, rs)
		}
	})
	return out
}

// Partitions is the number of partitions in a.
func (a Assignments) Partitions() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

// Brokers returns the brokers that hold a replica, sorted.
func (a Assignments) Brokers() []int32 {
	var ids []int32
	a.Each(func(_ string, _ int32, rs []int32) { ids = append(ids, rs...) })
	slices.Sort(ids)
	return slices.Compact(ids)
}

// String is "topic/0=[0 1 2] topic/1=[1 2 0] ...", in partition order.
func (a Assignments) String() string {
	var b []string
	a.Each(func(t string, p int32, rs []int32) { b = append(b, fmt.Sprintf("%s/%d=%v", t, p, rs)) })
	return strings.Join(b, " ")
}

func (a Assignments) set(t string, p int32, rs []int32) {
	if a[t] == nil {
		a[t] = map[int32][]int32{}
	}
	a[t][p] = slices.Clone(rs)
}

// Reassignment limits. A reassignment on a loaded 2-core machine takes
// seconds per partition; reassignPoll is how often its progress is read.
const reassignPoll = time.Second

// Throttle configs that Reassign sets and clears: the replication rate on
// each broker, and which replicas of a topic it applies to ("*": all; Kafka
// throttles only replicas that are not in sync, so followers that are in
// sync are never slowed).
var (
	brokerThrottles = []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate"}
	topicThrottles  = []string{"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
)

// Reassign moves the partitions of to onto their replicas in to
// (AlterPartitionAssignments), waits until Kafka has no reassignment of
// them in progress and the metadata shows every partition on its target,
// then elects the preferred leaders. Partitions already on their target are
// not sent. With throttle > 0 the replication of to's topics is throttled to
// that many bytes/s on each broker involved while they move.
//
// The throttle configs are cleared at the end however Reassign ends (with a
// context of its own if ctx ended), on every broker involved and every live
// one (a throttle someone set by hand goes too), also when nothing needed
// to move: a call that finds partitions in place still
// clears the throttle that a cut-short one left. When ctx ends first, the
// error says which partitions were still moving when last seen.
func (c *Client) Reassign(ctx context.Context, to Assignments, throttle int64) (err error) {
	topics := slices.Sorted(maps.Keys(to))
	if len(topics) == 0 {
		return nil
	}
	now, err := c.Assignments(ctx, topics...)
	if err != nil {
		return fmt.Errorf("kafkaadmin: reassign: %w", err)
	}
	// Every live broker too: a call cut short may have throttled one
	// that holds none of these partitions any more.
	live, err := c.BrokerHosts(ctx)
	if err != nil {
		return fmt.Errorf("kafkaadmin: reassign: %w", err)
	}
	brokers := slices.Concat(now.Brokers(), to.Brokers(), slices.Collect(maps.Keys(live)))
	slices.Sort(brokers)
	brokers = slices.Compact(brokers)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = errors.Join(err, c.setThrottle(cctx, topics, brokers, 0))
	}()

	move := now.Changed(to)
	if len(move) == 0 {
		return nil
	}
	if throttle > 0 {
		if err := c.setThrottle(ctx, topics, brokers, throttle); err != nil {
			return err
		}
	}
	req := kadm.AlterPartitionAssignmentsReq{}
	move.Each(func(t string, p int32, rs []int32) { req.Assign(t, p, rs) })
	resps, err := c.adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return fmt.Errorf("kafkaadmin: reassign %s: %w", move, err)
	}
	var errs []error
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s/%d: %w (%s)", r.Topic, r.Partition, r.Err, r.ErrMessage))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kafkaadmin: reassign: %w", err)
	}

	set := move.topicsSet()
	var moving string
	var lookErr error // the last look that failed, if the last failed
	err = wait.PollUntilContextCancel(ctx, reassignPoll, true, func(ctx context.Context) (bool, error) {
		moving, lookErr = c.stillMoving(ctx, set, move)
		return lookErr == nil && moving == "", nil
	})
	if err != nil {
		if lookErr != nil {
			return fmt.Errorf("kafkaadmin: reassign: progress unknown, the last look failed: %w: %w", lookErr, err)
		}
		return fmt.Errorf("kafkaadmin: reassign: still moving when last seen: %s: %w", moving, err)
	}
	return c.electPreferred(ctx, set)
}

// stillMoving says which partitions of set are still being reassigned, or
// are not yet on their replicas in to ("" when none is).
func (c *Client) stillMoving(ctx context.Context, set kadm.TopicsSet, to Assignments) (string, error) {
	rs, err := c.adm.ListPartitionReassignments(ctx, set)
	if err != nil {
		return "", fmt.Errorf("list reassignments: %w", err)
	}
	var b []string
	for _, r := range rs.Sorted() {
		b = append(b, fmt.Sprintf("%s/%d adding %v removing %v", r.Topic, r.Partition, r.AddingReplicas, r.RemovingReplicas))
	}
	if len(b) > 0 {
		return strings.Join(b, ", "), nil
	}
	now, err := c.Assignments(ctx, slices.Sorted(maps.Keys(to))...)
	if err != nil {
		return "", err
	}
	if left := now.Changed(to); len(left) > 0 {
		return "metadata not yet at " + left.String(), nil
	}
	return "", nil
}

// ElectPreferred makes every partition of topics led by its first replica
// (its preferred leader), moved or not. A partition already so led is
// fine.
func (c *Client) ElectPreferred(ctx context.Context, topics ...string) error {
	now, err := c.Assignments(ctx, topics...)
	if err != nil {
		return fmt.Errorf("kafkaadmin: elect preferred leaders: %w", err)
	}
	return c.electPreferred(ctx, now.topicsSet())
}

// topicsSet is a's partitions, as kadm names them.
func (a Assignments) topicsSet() kadm.TopicsSet {
	set := kadm.TopicsSet{}
	a.Each(func(t string, p int32, _ []int32) {
		if set[t] == nil {
			set[t] = map[int32]struct{}{}
		}
		set[t][p] = struct{}{}
	})
	return set
}

// electPreferred makes each partition of set led by its first replica. A
// partition already so led is fine.
func (c *Client) electPreferred(ctx context.Context, set kadm.TopicsSet) error {
	rs, err := c.adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		return fmt.Errorf("kafkaadmin: elect preferred leaders: %w", err)
	}
	var errs []error
	for t, ps := range rs {
		for p, r := range ps {
			if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				errs = append(errs, fmt.Errorf("%s/%d: %w", t, p, r.Err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kafkaadmin: elect preferred leaders: %w", err)
	}
	return nil
}

// setThrottle sets the replication throttle of topics on brokers to rate
// bytes/s, or clears it when rate is 0.
func (c *Client) setThrottle(ctx context.Context, topics []string, brokers []int32, rate int64) error {
	op := func(names []string, value string) []kadm.AlterConfig {
		var cs []kadm.AlterConfig
		for _, n := range names {
			if rate > 0 {
				cs = append(cs, kadm.AlterConfig{Op: kadm.SetConfig, Name: n, Value: &value})
			} else {
				cs = append(cs, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: n})
			}
		}
		return cs
	}
	var errs []error
	rs, err := c.adm.AlterBrokerConfigs(ctx, op(brokerThrottles, strconv.FormatInt(rate, 10)), brokers...)
	errs = append(errs, err)
	for _, r := range rs {
		errs = append(errs, r.Err)
	}
	rs, err = c.adm.AlterTopicConfigs(ctx, op(topicThrottles, "*"), topics...)
	errs = append(errs, err)
	for _, r := range rs {
		errs = append(errs, r.Err)
	}
	if err := errors.Join(errs...); err != nil {
		what := fmt.Sprintf("set the replication throttle to %d B/s", rate)
		if rate == 0 {
			what = "clear the replication throttle"
		}
		return fmt.Errorf("kafkaadmin: %s of topics %v on brokers %v: %w", what, topics, brokers, err)
	}
	return nil
}

// Truncate deletes every record of topic (DeleteRecords up to each
// partition's end offset), so that a consumer from the start reads only
// what comes after, and a reassignment copies next to nothing. A topic
// that does not exist has nothing to delete.
func (c *Client) Truncate(ctx context.Context, topic string) error {
	ends, err := c.adm.ListEndOffsets(ctx, topic)
	if errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(ends.Error(), kerr.UnknownTopicOrPartition) {
		return nil
	}
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("kafkaadmin: truncate %s: end offsets: %w", topic, err)
	}
	rs, err := c.adm.DeleteRecords(ctx, ends.Offsets())
	if err != nil {
		return fmt.Errorf("kafkaadmin: truncate %s: %w", topic, err)
	}
	var errs []error
	for _, ps := range rs {
		for p, r := range ps {
			if r.Err != nil {
				errs = append(errs, fmt.Errorf("%s/%d: %w", topic, p, r.Err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kafkaadmin: truncate: %w", err)
	}
	return nil
}
