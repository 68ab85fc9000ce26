package localkafka

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkachaos/kafkachaos/kafkaadmin"
)

// Reassign on real brokers: the partitions move with their records, each is
// led by its new first replica, and the replication throttle it set is gone
// afterwards, on every broker and on the topic. Then Truncate empties the
// topic.
func TestReassignAndTruncate(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), rejoinTimeout)
	defer cancel()
	const topic, partitions, records = "reassign-test", 3, 300
	adm := kadm.NewClient(client(t, c))
	created, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil || created.Err != nil {
		t.Fatalf("CreateTopic(%s, RF 1) = %v, %v", topic, created.Err, err)
	}
	producer := client(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	var batch []*kgo.Record
	for i := range records {
		batch = append(batch, kgo.StringRecord(fmt.Sprintf("record-%03d", i)))
	}
	if err := producer.ProduceSync(ctx, batch...).FirstErr(); err != nil {
		t.Fatalf("producing %d records: %v", records, err)
	}

	ka := kafkaadmin.New(client(t, c))
	before, err := ka.Assignments(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	// Every partition to the next broker, with a second replica after it.
	to := kafkaadmin.Assignments{topic: {}}
	before.Each(func(_ string, p int32, rs []int32) {
		next := (rs[0] + 1) % 3
		to[topic][p] = []int32{next, (next + 1) % 3}
	})
	if err := ka.Reassign(ctx, to, 1<<20); err != nil {
		t.Fatalf("Reassign(%s) from %s: %v", to, before, err)
	}
	after, err := ka.Assignments(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if after.String() != to.String() {
		t.Errorf("after Reassign: %s, want %s", after, to)
	}
	leaders, err := ka.Leaders(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range to[topic] {
		if leaders[p] != rs[0] {
			t.Errorf("%s/%d led by %d, want its first replica %d", topic, p, leaders[p], rs[0])
		}
	}

	for _, id := range []int32{0, 1, 2} {
		cfgs, err := ka.BrokerConfigs(ctx, id, "leader.replication.throttled.rate", "follower.replication.throttled.rate")
		if err != nil {
			t.Fatal(err)
		}
		if len(cfgs) > 0 {
			t.Errorf("broker %d still has a replication throttle: %v", id, cfgs)
		}
	}
	tcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range tcs {
		for _, cfg := range rc.Configs {
			if slices.Contains([]string{"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}, cfg.Key) &&
				cfg.Value != nil && *cfg.Value != "" {
				t.Errorf("topic %s still throttles %s=%s", topic, cfg.Key, *cfg.Value)
			}
		}
	}

	consumer := client(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < records {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consuming after the move: %d of %d records read: %v", len(seen), records, err)
		}
		fetches.EachError(func(tp string, p int32, err error) { t.Errorf("fetch %s-%d: %v", tp, p, err) })
		fetches.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}

	if err := ka.Truncate(ctx, topic); err != nil {
		t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var kept int64
	starts.Each(func(o kadm.ListedOffset) {
		end, _ := ends.Lookup(topic, o.Partition)
		kept += end.Offset - o.Offset
	})
	if kept != 0 {
		t.Errorf("%d records left after Truncate: starts %v, ends %v", kept, starts, ends)
	}
	if err := ka.Truncate(ctx, "no-such-topic"); err != nil {
		t.Errorf("Truncate of a topic that does not exist: %v", err)
	}
}
