package scenario

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/javaload"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

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
		return nil
	})
	if err != nil {
		return 0, err
	}
	cl, err := env.KafkaClient()
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return javaclients.DeliveryLimit(ctx, kadm.NewClient(cl))
}

// brokersDone is the drain's word from the brokers, with one client for
// the whole drain: for a share group, whether they count every record
// below end done (javaclients.ShareDone); a consumer group's drain is
// the records read alone. closeDone releases the client.
func (j *javaClients) brokersDone() (done func(context.Context, []int64) error, closeDone func(), err error) {
	if j.spec.Protocol != javaload.Share {
		return func(context.Context, []int64) error { return nil }, func() {}, nil
	}
	cl, err := j.env.KafkaClient()
	if err != nil {
		return nil, nil, err
	}
	adm := kadm.NewClient(cl)
	return func(ctx context.Context, end []int64) error {
		return javaclients.ShareDone(ctx, adm, j.spec.Group, j.spec.Topic, end)
	}, cl.Close, nil
}

// shareObservation says what the share group did.
func shareObservation(r javaclients.ShareResult) string {
	return fmt.Sprintf("the Java share group: %d records delivered (%d deliveries), %d redelivered (at most %d deliveries of one, the limit %d), %d accepted, %d acknowledgements refused, %d whose outcome only the brokers saw",
		r.Delivered, r.Deliveries, r.Redelivered, r.MostDeliveries, r.DeliveryLimit, r.Accepted, r.FailedAcks, r.Unseen)
}
