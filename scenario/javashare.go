package scenario

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/javaload"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// deliveryLimitConfig is the brokers' limit on a share group record's
// deliveries, past which they archive it.
const deliveryLimitConfig = "group.share.delivery.count.limit"

// shareSupport says whether the brokers serve share groups (share.version
// finalized at 1 or more: Kafka 4.2 and later turn it on for a new
// cluster), skipping otherwise, and returns their delivery count limit.
func shareSupport(ctx context.Context, env *Env) (limit int, err error) {
	err = env.WithKafka(func(cl *kafkaadmin.Client) error {
		fs, err := cl.Features(ctx)
		if err != nil {
			return fmt.Errorf("scenario: does Kafka serve share groups: %w", err)
		}
		node := int32(-1)
		for id, f := range fs {
			if f.ShareVersion < 1 {
				return &SkipError{Reason: fmt.Sprintf("broker %d has %s at level %d: it serves no share groups (KIP-932; Kafka 4.2 and later turn it on for a new cluster, kafka-features.sh upgrade --feature %s=1 does for an older one)",
					id, kafkaadmin.ShareVersionFeature, f.ShareVersion, kafkaadmin.ShareVersionFeature)}
			}
			node = id
		}
		if node < 0 {
			return fmt.Errorf("scenario: no broker said which features it has")
		}
		v, err := cl.BrokerConfig(ctx, node, deliveryLimitConfig)
		if err != nil {
			return fmt.Errorf("scenario: the share groups' delivery limit: %w", err)
		}
		if limit, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("scenario: broker %d's %s is %q: %w", node, deliveryLimitConfig, v, err)
		}
		return nil
	})
	return limit, err
}

// shareGroupReady says whether the share group has all its members, and
// every partition is assigned to one of them, as the brokers describe it
// (share consumers print no assignment).
func (j *javaClients) shareGroupReady(ctx context.Context, adm *kadm.Client) error {
	gs, err := adm.DescribeShareGroups(ctx, j.spec.Group)
	if err != nil {
		return fmt.Errorf("describe share group %s: %w", j.spec.Group, err)
	}
	g, ok := gs[j.spec.Group]
	switch {
	case !ok:
		return fmt.Errorf("the share group %s was not described", j.spec.Group)
	case g.Err != nil:
		return fmt.Errorf("describe share group %s: %w", j.spec.Group, g.Err)
	}
	assigned := len(g.AssignedPartitions()[j.spec.Topic])
	if len(g.Members) != j.spec.Members || assigned != j.partitions {
		return fmt.Errorf("the share group has %d of %d members, %d of %d partitions assigned (state %s)",
			len(g.Members), j.spec.Members, assigned, j.partitions, g.GroupState)
	}
	return nil
}

// shareStartPassed says whether the brokers count every record of each
// partition below end as done (accepted or archived): its share-partition
// start offset has reached end, or its share-partition lag (KIP-1226,
// which subtracts the records done above the start offset: the start
// offset itself may wait for the next acquisition to move) is 0, which,
// taken against the partition's end now, covers end. It is the brokers'
// own word: a member that was killed cannot say whether its last
// acknowledgement arrived. Brokers that serve no lag (-1) drain by the
// start offset alone.
func (j *javaClients) shareStartPassed(ctx context.Context, adm *kadm.Client, end []int64) error {
	offs, err := adm.DescribeShareGroupOffsets(ctx, j.spec.Group)
	if err != nil {
		return fmt.Errorf("describe the offsets of share group %s: %w", j.spec.Group, err)
	}
	g := offs[j.spec.Group]
	if g.Err != nil {
		return fmt.Errorf("describe the offsets of share group %s: %w", j.spec.Group, g.Err)
	}
	for p, e := range end {
		o, ok := g.Offsets.Lookup(j.spec.Topic, int32(p))
		switch {
		case !ok:
			return fmt.Errorf("partition %d has no share-partition start offset", p)
		case o.Err != nil:
			return fmt.Errorf("partition %d: %w", p, o.Err)
		case o.StartOffset < e && o.Lag != 0:
			return fmt.Errorf("partition %d's share-partition start offset is %d and its lag %d, its end %d", p, o.StartOffset, o.Lag, e)
		}
	}
	return nil
}

// shareDrained says, for a share group, whether the brokers' start
// offsets have passed end (shareStartPassed); a consumer group's drain is
// the records read.
func (j *javaClients) shareDrained(ctx context.Context, end []int64) error {
	if j.spec.Protocol != javaload.Share {
		return nil
	}
	cl, err := j.env.KafkaClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	return j.shareStartPassed(ctx, kadm.NewClient(cl), end)
}

// shareObservation says what the share group did.
func shareObservation(r javaclients.ShareResult) string {
	return fmt.Sprintf("the Java share group: %d records delivered (%d deliveries), %d redelivered (at most %d deliveries of one, the limit %d), %d accepted, %d acknowledgements refused, %d whose outcome only the brokers saw",
		r.Delivered, r.Deliveries, r.Redelivered, r.MostDeliveries, r.DeliveryLimit, r.Accepted, r.FailedAcks, r.Unseen)
}
