package kafkaadmin

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
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
