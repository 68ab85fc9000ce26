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
// every partition is assigned (javaclients.ShareGroupReady).
func (j *javaClients) shareGroupReady(ctx context.Context, adm *kadm.Client) error {
	return javaclients.ShareGroupReady(ctx, adm, j.spec.Group, j.spec.Topic, j.spec.Members, j.partitions)
}

// shareDrained says, for a share group, whether the brokers' start
// offsets have passed end (javaclients.ShareDone); a consumer group's drain is
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
	return javaclients.ShareDone(ctx, kadm.NewClient(cl), j.spec.Group, j.spec.Topic, end)
}

// shareObservation says what the share group did.
func shareObservation(r javaclients.ShareResult) string {
	return fmt.Sprintf("the Java share group: %d records delivered (%d deliveries), %d redelivered (at most %d deliveries of one, the limit %d), %d accepted, %d acknowledgements refused, %d whose outcome only the brokers saw",
		r.Delivered, r.Deliveries, r.Redelivered, r.MostDeliveries, r.DeliveryLimit, r.Accepted, r.FailedAcks, r.Unseen)
}
