package javaclients

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// ShareGroupReady says whether share group has all its members, and
// every partition is assigned to one of them, as the brokers describe it
// (share consumers print no assignment).
func ShareGroupReady(ctx context.Context, adm *kadm.Client, group, topic string, members, partitions int) error {
	gs, err := adm.DescribeShareGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("describe share group %s: %w", group, err)
	}
	g, ok := gs[group]
	switch {
	case !ok:
		return fmt.Errorf("the share group %s was not described", group)
	case g.Err != nil:
		return fmt.Errorf("describe share group %s: %w", group, g.Err)
	}
	assigned := len(g.AssignedPartitions()[topic])
	if len(g.Members) != members || assigned != partitions {
		return fmt.Errorf("the share group has %d of %d members, %d of %d partitions assigned (state %s)",
			len(g.Members), members, assigned, partitions, g.GroupState)
	}
	return nil
}

// ShareDone says whether the brokers count every record of each
// partition below end as done (accepted or archived): its share-partition
// start offset has reached end, or its share-partition lag (KIP-1226,
// which subtracts the records done above the start offset: the start
// offset itself may wait for the next acquisition to move) is 0, which,
// taken against the partition's end now, covers end. It is the brokers'
// own word: a member that was killed cannot say whether its last
// acknowledgement arrived. Brokers that serve no lag (-1) drain by the
// start offset alone.
func ShareDone(ctx context.Context, adm *kadm.Client, group, topic string, end []int64) error {
	offs, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("describe the offsets of share group %s: %w", group, err)
	}
	g := offs[group]
	if g.Err != nil {
		return fmt.Errorf("describe the offsets of share group %s: %w", group, g.Err)
	}
	for p, e := range end {
		o, ok := g.Offsets.Lookup(topic, int32(p))
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

// DeliveryLimitConfig is the brokers' limit on a share group record's
// deliveries, past which they archive it.
const DeliveryLimitConfig = "group.share.delivery.count.limit"

// DeliveryLimit reads a broker's share group delivery limit (the
// cluster-wide describe lists only dynamic configs).
func DeliveryLimit(ctx context.Context, adm *kadm.Client) (int, error) {
	brokers, err := adm.ListBrokers(ctx)
	switch {
	case err != nil:
		return 0, fmt.Errorf("javaclients: the share groups' delivery limit: %w", err)
	case len(brokers) == 0:
		return 0, fmt.Errorf("javaclients: the share groups' delivery limit: no broker listed")
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, brokers[0].NodeID)
	if err != nil {
		return 0, fmt.Errorf("javaclients: the share groups' delivery limit: %w", err)
	}
	for _, rc := range rcs {
		for _, cfg := range rc.Configs {
			if cfg.Key == DeliveryLimitConfig && cfg.Value != nil {
				n, err := strconv.Atoi(*cfg.Value)
				if err != nil {
					return 0, fmt.Errorf("javaclients: %s is %q: %w", DeliveryLimitConfig, *cfg.Value, err)
				}
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("javaclients: the brokers did not describe %s: do they serve share groups (Kafka 4.2 and later)?", DeliveryLimitConfig)
}
