package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Problem is one failed point of CheckLogDirs: what was expected of a
// broker and what was seen. It reads like brokers.Problem, the Kubernetes
// side of the same rejoin checks.
type Problem struct {
	Broker int32
	Check  string // "registered" or "log dir holds its partitions"
	Want   string
	Got    string
}

// String says which broker failed which check, e.g.
// "broker 1: log dir holds its partitions: want t-0 in a log dir, got absent from its log dirs [/data]".
func (p Problem) String() string {
	return fmt.Sprintf("broker %d: %s: want %s, got %s", p.Broker, p.Check, p.Want, p.Got)
}

// CheckLogDirs checks, after broker id rejoined, that it is registered and
// that its log dirs hold every partition of topic that has id as a replica,
// with a Metadata request and a DescribeLogDirs request to broker id alone.
// It returns a Problem (Check "registered") if id is not registered, and
// otherwise one (Check "log dir holds its partitions") per partition that
// its log dirs lack, per log dir in error, and if id is a replica of no
// partition of topic, which leaves nothing to check. The error is for
// requests that failed and a topic that the metadata answer errs on.
func (c *Client) CheckLogDirs(ctx context.Context, id int32, topic string) ([]Problem, error) {
	const check = "log dir holds its partitions"
	fail := func(format string, args ...any) ([]Problem, error) {
		return nil, fmt.Errorf("kafkaadmin: log dirs of broker %d: "+format, append([]any{id}, args...)...)
	}
	m, err := c.metadata(ctx, topic)
	if err != nil {
		return fail("%w", err)
	}
	registered := m.Brokers.NodeIDs()
	slices.Sort(registered)
	if !slices.Contains(registered, id) {
		return []Problem{{Broker: id, Check: "registered",
			Want: fmt.Sprintf("broker %d registered", id), Got: fmt.Sprintf("registered brokers %v", registered)}}, nil
	}
	t, err := topicIn(m, topic)
	if err != nil {
		return fail("%w", err)
	}
	var want []int32
	for _, p := range t.Partitions.Sorted() {
		if slices.Contains(p.Replicas, id) {
			want = append(want, p.Partition)
		}
	}
	if len(want) == 0 {
		return []Problem{{Broker: id, Check: check,
			Want: fmt.Sprintf("a partition of %s with broker %d as a replica", topic, id),
			Got:  fmt.Sprintf("none of its %d partitions", len(t.Partitions))}}, nil
	}

	var set kadm.TopicsSet
	set.Add(topic, want...)
	dirs, err := c.adm.DescribeBrokerLogDirs(ctx, id, set)
	var code *kerr.Error
	switch {
	case errors.As(err, &code): // the answer's own error code
		return []Problem{{Broker: id, Check: check, Want: "log dirs described", Got: code.Error()}}, nil
	case err != nil:
		return fail("describe log dirs request: %w", err)
	}
	var out []Problem
	held := map[int32]string{}
	var healthy []string
	for _, d := range dirs.Sorted() {
		if d.Err != nil {
			out = append(out, Problem{Broker: id, Check: check, Want: "log dir " + d.Dir + " online", Got: d.Err.Error()})
			continue
		}
		healthy = append(healthy, d.Dir)
		for p := range d.Topics[topic] {
			held[p] = d.Dir
		}
	}
	absent := fmt.Sprintf("absent from its log dirs %v", healthy)
	if len(healthy) == 0 {
		absent = "no log dir online"
	}
	for _, p := range want {
		if _, ok := held[p]; !ok {
			out = append(out, Problem{Broker: id, Check: check, Want: fmt.Sprintf("%s-%d in a log dir", topic, p), Got: absent})
		}
	}
	return out, nil
}

// LogDirs returns the paths of broker id's log dirs that are online,
// sorted, with a DescribeLogDirs request to broker id alone for every
// partition (which lists every dir, as kafka-log-dirs.sh does; naming no
// partition would list no dir on kfake). A dir in error is left out:
// CheckLogDirs reports it.
func (c *Client) LogDirs(ctx context.Context, id int32) ([]string, error) {
	dirs, err := c.adm.DescribeBrokerLogDirs(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: log dirs of broker %d: %w", id, err)
	}
	var out []string
	for _, d := range dirs.Sorted() {
		if d.Err == nil {
			out = append(out, d.Dir)
		}
	}
	return out, nil
}
