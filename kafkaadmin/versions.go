package kafkaadmin

import (
	"context"
	"fmt"
)

// KafkaVersions guesses each broker's Kafka version from the API versions
// it answers with (franz-go's kversion): "v4.4", or "at least v4.4" for a
// Kafka newer than franz-go knows; by node ID. Brokers answer with no
// software version of their own, so this is the cheapest truth there is.
// A broker that did not answer is left out; the error is for the metadata
// request that lists them.
func (c *Client) KafkaVersions(ctx context.Context) (map[int32]string, error) {
	vs, err := c.adm.ApiVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafkaadmin: Kafka versions: %w", err)
	}
	out := make(map[int32]string, len(vs))
	for id, v := range vs {
		if v.Err == nil {
			out[id] = v.VersionGuess()
		}
	}
	return out, nil
}
