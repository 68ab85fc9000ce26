package kafkaadmin

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client asks one Kafka cluster. Make one with New.
type Client struct {
	adm *kadm.Client
	raw requester // the requests kadm has no call for
}

// requester sends raw requests: where the client routes them (any broker,
// or the controller for admin requests), or to one broker alone.
type requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	RequestBroker(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error)
}

// New returns a Client over cl. Closing cl is the caller's job.
func New(cl *kgo.Client) *Client {
	return &Client{adm: kadm.NewClient(cl), raw: kgoRequester{cl}}
}

type kgoRequester struct{ cl *kgo.Client }

func (k kgoRequester) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return k.cl.Request(ctx, req)
}

func (k kgoRequester) RequestBroker(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	return k.cl.Broker(int(id)).Request(ctx, req)
}

// metadata asks any broker for metadata of topics (of all topics when
// there are none). kadm answers from the kgo client's metadata cache, up to
// MetadataMinAge old, unless the context asks for authorized operations:
// then it sends the request. The operations themselves are not used.
func (c *Client) metadata(ctx context.Context, topics ...string) (kadm.Metadata, error) {
	m, err := c.adm.Metadata(kadm.WithAuthorizedOps(ctx), topics...)
	if err != nil {
		return kadm.Metadata{}, fmt.Errorf("metadata request: %w", err)
	}
	return m, nil
}

// brokerMetadata is metadata of no topic: the brokers and the cluster ID.
func (c *Client) brokerMetadata(ctx context.Context) (kadm.Metadata, error) {
	m, err := c.adm.BrokerMetadata(kadm.WithAuthorizedOps(ctx))
	if err != nil {
		return kadm.Metadata{}, fmt.Errorf("metadata request: %w", err)
	}
	return m, nil
}

// topicIn returns topic from a metadata answer, or its error.
func topicIn(m kadm.Metadata, topic string) (kadm.TopicDetail, error) {
	t, ok := m.Topics[topic]
	switch {
	case !ok:
		return kadm.TopicDetail{}, fmt.Errorf("topic %s: not in the metadata answer", topic)
	case t.Err != nil:
		return t, fmt.Errorf("topic %s: %w", topic, t.Err)
	}
	return t, nil
}
