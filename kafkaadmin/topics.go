package kafkaadmin

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteTopic deletes topic. A topic that does not exist is already gone.
func (c *Client) DeleteTopic(ctx context.Context, topic string) error {
	rs, err := c.adm.DeleteTopics(ctx, topic)
	if err == nil {
		err = rs.Error()
	}
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("kafkaadmin: delete topic %s: %w", topic, err)
	}
	return nil
}

// TopicsKnownTo asks broker id alone for the metadata of topics, and
// returns those it does not know: a broker that caught up with the
// metadata log knows every topic the controllers created.
func (c *Client) TopicsKnownTo(ctx context.Context, id int32, topics ...string) (unknown []string, err error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := c.raw.RequestBroker(ctx, id, req)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: metadata from broker %d: %w", id, err)
	}
	return unknownTopics(resp.(*kmsg.MetadataResponse), topics), nil
}

// unknownTopics are those of topics that resp does not list without an
// error.
func unknownTopics(resp *kmsg.MetadataResponse, topics []string) []string {
	known := map[string]bool{}
	for _, t := range resp.Topics {
		if t.Topic != nil && t.ErrorCode == 0 {
			known[*t.Topic] = true
		}
	}
	var out []string
	for _, t := range topics {
		if !known[t] {
			out = append(out, t)
		}
	}
	return out
}
